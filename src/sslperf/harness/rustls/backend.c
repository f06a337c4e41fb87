/* The rustls backend: rustls through its C API (rustls-ffi), with the crypto
 * provider the build chose (aws-lc-rs or ring). rustls is a TLS library with
 * no raw primitive API, so only the tls family runs; every other family of
 * the catalog answers n/a and says so. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "harness.h"
#include "rustls.h"

prep_status prepare_tls(const case_name *name, bench_case *out, prep_result *res);   /* tls.c */

const char SP_BACKEND_NAME[] = "rustls";

static prep_status no_primitives(const case_name *name, bench_case *out, prep_result *res)
{
    (void)out;
    return prep_na(res, "rustls has no raw %s API (it is a TLS library; its primitives belong to its crypto "
                        "provider); only tls cases run", name->part[0]);
}

static prep_status no_openssl_api(const case_name *name, bench_case *out, prep_result *res)
{
    (void)name, (void)out;
    return prep_na(res, "the api family measures OpenSSL API calls, which rustls does not have");
}

const sp_family SP_FAMILIES[] = {
    {"cipher", no_primitives}, {"digest", no_primitives}, {"mac", no_primitives},  {"sig", no_primitives},
    {"kex", no_primitives},    {"kem", no_primitives},    {"keygen", no_primitives}, {"afalg", no_primitives},
    {"api", no_openssl_api},   {"tls", prepare_tls},
};
const size_t SP_N_FAMILIES = sizeof(SP_FAMILIES) / sizeof(SP_FAMILIES[0]);

const sp_command SP_BACKEND_COMMANDS[] = {
    {"threads", 3, 4, threads_run, "threads CASE THREADS MS [own|shared]"},
};
const size_t SP_N_BACKEND_COMMANDS = sizeof(SP_BACKEND_COMMANDS) / sizeof(SP_BACKEND_COMMANDS[0]);

void sp_backend_init(const char *command)
{
    (void)command;
}

const char *sp_library_version(void)
{
    static char text[128];
    if (!text[0]) {
        struct rustls_str v = rustls_version();     /* rustls-ffi/0.15.7/rustls/0.23.46/aws-lc-rs */
        snprintf(text, sizeof(text), "%.*s", (int)v.len, v.data);
    }
    return text;
}

void sp_backend_info(void)
{
    const struct rustls_crypto_provider *provider = rustls_crypto_provider_default();
    printf(",\"flavor\":\"rustls\",\"version_string\":");
    json_string(sp_library_version());
    printf(",\"version_number\":0,\"speed_aead_rekey\":false,\"ia32cap\":null");
    printf(",\"crypto_provider\":{\"name\":");
    const char *name = strrchr(sp_library_version(), '/');
    json_string(name ? name + 1 : "");
    printf(",\"fips\":%s}", provider && rustls_crypto_provider_fips(provider) ? "true" : "false");
    rustls_crypto_provider_free(provider);
    printf(",\"deterministic_rand\":");
    json_string(sp_deterministic_state());
}

const char *sp_deterministic_state(void)
{
    return "unsupported: rustls draws its randomness from its crypto provider, which has no fixed stream";
}

