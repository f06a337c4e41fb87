/* What a backend may leave out (backend.h's optional hooks): weak definitions the backend's own replace. */
#include <stddef.h>

#include "backend.h"
#include "harness.h"

#define SP_DEFAULT __attribute__((weak))

SP_DEFAULT const char *sp_backend_no_thread_context(void)
{
    return "this library has no library context per thread (use own, or shared for TLS handshakes)";
}

SP_DEFAULT void *sp_backend_thread_context(void)
{
    return NULL;
}

SP_DEFAULT void sp_backend_thread_context_free(void *context)
{
    (void)context;
}

SP_DEFAULT void sp_backend_explain(prep_result *res)
{
    (void)res;
}

SP_DEFAULT void sp_clear_errors(void)
{
}

SP_DEFAULT void sp_append_errors(char *text, size_t size)
{
    (void)text, (void)size;     /* a library without an error queue puts its call's result in the text itself */
}
