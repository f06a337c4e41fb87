/* sslperf library probe for rustls-ffi: the smallest program that makes a
 * TLS client connection object. It prints what the library says about
 * itself as JSON (probe.c's fields), and its own size is the footprint a
 * minimal rustls client pays. */
#include <stdio.h>
#include <string.h>

#include "rustls.h"

int main(void)
{
    struct rustls_client_config_builder *builder = rustls_client_config_builder_new();
    struct rustls_server_cert_verifier *verifier = NULL;
    const struct rustls_client_config *config = NULL;
    struct rustls_connection *conn = NULL;
    struct rustls_str version = rustls_version();   /* rustls-ffi/0.15.7/rustls/0.23.46/aws-lc-rs */
    int ok = rustls_platform_server_cert_verifier(&verifier) == RUSTLS_RESULT_OK;
    if (ok)
        rustls_client_config_builder_set_server_verifier(builder, verifier);
    ok = ok && rustls_client_config_builder_build(builder, &config) == RUSTLS_RESULT_OK;
    if (!ok)
        rustls_client_config_builder_free(builder);
    ok = ok && rustls_client_connection_new(config, "localhost", &conn) == RUSTLS_RESULT_OK;
    /* The rustls-ffi version: the text between the first two slashes. */
    const char *start = memchr(version.data, '/', version.len), *end = version.data + version.len;
    start = start ? start + 1 : end;
    const char *stop = memchr(start, '/', (size_t)(end - start));
    printf("{\"flavor\": \"rustls\", \"version_string\": \"%.*s\", \"version_number\": 0, "
           "\"library_version\": \"%.*s\", \"connection\": %s}\n",
           (int)version.len, version.data, (int)((stop ? stop : end) - start), start, ok ? "true" : "false");
    rustls_connection_free(conn);
    rustls_client_config_free(config);
    rustls_server_cert_verifier_free(verifier);
    return ok ? 0 : 1;
}
