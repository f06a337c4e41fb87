/* The wolfSSL backend: TLS through wolfSSL's own API and primitives through
 * wolfCrypt, from a wolfSSL configured by sslperf (libs/variants.py). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/error-crypt.h>

#include "backend.h"
#include "harness.h"
#include "wolfssl_cases.h"

const char SP_BACKEND_NAME[] = "wolfssl";

static prep_status no_openssl_api(const case_name *name, bench_case *out, prep_result *res)
{
    (void)out;
    return prep_na(res, "the %s family measures OpenSSL API calls (or the kernel's through them), which wolfSSL's own "
                        "API does not have", name->part[0]);
}

const sp_family SP_FAMILIES[] = {
    {"cipher", prepare_wolf_cipher}, {"digest", prepare_wolf_digest}, {"mac", prepare_wolf_mac},
    {"sig", prepare_wolf_pkey},      {"kex", prepare_wolf_pkey},      {"kem", prepare_wolf_pkey},
    {"keygen", prepare_wolf_pkey},   {"tls", prepare_wolf_tls},       {"api", no_openssl_api},
    {"afalg", no_openssl_api},
};
const size_t SP_N_FAMILIES = sizeof(SP_FAMILIES) / sizeof(SP_FAMILIES[0]);

const sp_command SP_BACKEND_COMMANDS[] = {
    {"threads", 3, 4, threads_run, "threads CASE THREADS MS [own]"},
};
const size_t SP_N_BACKEND_COMMANDS = sizeof(SP_BACKEND_COMMANDS) / sizeof(SP_BACKEND_COMMANDS[0]);

void sp_backend_init(const char *command)
{
    (void)command;
    wolfSSL_Init();
}

const char *sp_library_version(void)
{
    static char text[64];
    if (!text[0])
        snprintf(text, sizeof(text), "wolfSSL %s", wolfSSL_lib_version());
    return text;
}

void sp_backend_info(void)
{
    printf(",\"flavor\":\"wolfssl\",\"version_string\":");
    json_string(sp_library_version());
    printf(",\"version_number\":%lu,\"speed_aead_rekey\":false,\"ia32cap\":null", (unsigned long)wolfSSL_lib_version_hex());
    printf(",\"deterministic_rand\":");
    json_string(sp_deterministic_state());
}

const char *sp_deterministic_state(void)
{
    return "unsupported: wolfSSL draws from its own DRBG, which sslperf does not replace";
}

