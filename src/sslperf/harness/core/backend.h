/* What a backend gives the core: one library API's side of the harness.
 *
 * A backend is a directory beside core/ (openssl/: OpenSSL, BoringSSL,
 * AWS-LC, LibreSSL; rustls/: rustls-ffi) compiled with core/ into one
 * program. It names itself, prepares cases by family (a family it cannot
 * run answers n/a with the reason, so the case catalog is the same for every
 * backend), says what its library is, and may add commands of its own.
 * sslperf picks the backend from the library's flavor
 * (measure/harness_client.py). */
#ifndef SSLPERF_BACKEND_H
#define SSLPERF_BACKEND_H

#include <stddef.h>

#include "harness.h"

typedef struct {
    const char *name;            /* the case id's first part */
    prepare_fn prepare;
} sp_family;

#define SP_ANY_ARGS -1
typedef struct {
    const char *name;
    int min_args, max_args;      /* after the command's name; SP_ANY_ARGS: no limit */
    int (*fn)(int argc, char **argv);
    const char *usage;
} sp_command;

extern const char SP_BACKEND_NAME[];
extern const sp_family SP_FAMILIES[];
extern const size_t SP_N_FAMILIES;
extern const sp_command SP_BACKEND_COMMANDS[];
extern const size_t SP_N_BACKEND_COMMANDS;
/* Also each backend's own: SP_MEMORY (memory.h), its side of memory per connection, and SP_HTTPS (loopback.h),
 * its TLS on a socket for HTTPS over loopback. */

/* The hooks below marked optional have defaults in core/defaults.c (a library without a context per thread,
 * without an error queue, with nothing to add about a case not prepared); a backend defines them to do more. */

/* Before anything else, with the command's name (e.g. memory hooks go in before the library allocates). */
void sp_backend_init(const char *command);
/* The library's own version text, as results carry it. */
const char *sp_library_version(void);
/* The info reply's fields about the library: each `,"key":value`. */
void sp_backend_info(void);
/* Optional: a last word on a case that was not prepared (e.g. n/a because a FIPS provider does not offer it). */
void sp_backend_explain(prep_result *res);
/* Whether every process draws one fixed random stream (SSLPERF_DETERMINISTIC=1): "on", "off" or why not. */
const char *sp_deterministic_state(void);
/* Optional: `threads CASE N MS libctx`: why this library has no per-thread library context (NULL: it has one), and
 * that context made the calling thread's default (NULL on failure) and freed. */
const char *sp_backend_no_thread_context(void);
void *sp_backend_thread_context(void);
void sp_backend_thread_context_free(void *context);
/* Optional: forget the library's queued errors (an n/a is not an error); sp_append_errors (harness.h) too. */
void sp_clear_errors(void);

#endif
