/* The OpenSSL-API backend: OpenSSL 1.1.1–4.x, BoringSSL, AWS-LC and
 * LibreSSL (compat.h says which). Its families measure primitives through
 * EVP and TLS through libssl; its own commands run TLS over loopback,
 * threads, memory, configuration checks and the case catalog. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compat.h"
#include "harness.h"
#include "families.h"

const char SP_BACKEND_NAME[] = "openssl";

const sp_family SP_FAMILIES[] = {
    {"cipher", prepare_cipher}, {"digest", prepare_digest}, {"mac", prepare_mac},
    {"sig", prepare_pkey},      {"kex", prepare_pkey},      {"kem", prepare_pkey},
    {"keygen", prepare_pkey},   {"api", prepare_api},       {"tls", prepare_tls},
    {"afalg", prepare_afalg},
};
const size_t SP_N_FAMILIES = sizeof(SP_FAMILIES) / sizeof(SP_FAMILIES[0]);

/* What imports of `openssl speed` and `bssl speed` hold beyond the families above (sslperf's importers
 * name their cases after these templates; the harness measures none of them). */
void list_imported(void)
{
    static const id_template PKE[] = {{"pke/{algorithm}/{operation}[/{workload}]", NULL, NULL, NULL}};
    static const id_template OTHER[] = {{"other/{algorithm}[/{size}][/{workload}]", NULL, NULL, ""}};
    printf("\"pke\":{");
    json_ids(SP_IDS(PKE));
    printf("},\"other\":{");
    json_ids(SP_IDS(OTHER));
    putchar('}');
}
/* The user's own programs, run against the library through the dynamic loader (sslperf/measure/modes/exec.py,
 * not this harness): PROGRAM names the command (its name, or the program and a digest of its arguments). */
static void list_exec(void)
{
    static const id_template EXEC[] = {{"exec/{program}", "exec", "{program}", "run"}};
    printf("\"exec\":{");
    json_ids(SP_IDS(EXEC));
    putchar('}');
}
/* The case catalog from the tables the families prepare from: one line. */
static int list_mode(int argc, char **argv)
{
    static void (*const lists[])(void) = {list_cipher, list_digest, list_mac, list_pkey, list_api, list_tls,
                                          list_threads, list_afalg, list_imported, list_exec};
    (void)argc, (void)argv;
    printf("{\"type\":\"catalog\"");
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        putchar(',');
        lists[i]();
    }
    printf("}\n");
    fflush(stdout);
    return 0;
}
static int mkcerts_mode(int argc, char **argv)
{
    (void)argc;
    int ok = make_certs(argv[0], atoi(argv[1]));
    if (!ok)
        ERR_print_errors_fp(stderr);
    printf("{\"type\":\"%s\",\"dir\":", ok ? "certs" : "error");
    json_string(argv[0]);
    printf("}\n");
    return ok ? 0 : 1;
}

static int write_pem_certs(int argc, char **argv)
{
    (void)argc;
    return pem_certs(argv[0]);
}

const sp_command SP_BACKEND_COMMANDS[] = {
    {"list", 0, 0, list_mode, "list   the case catalog (every family's tables), one JSON line"},
    {"mkcerts", 2, 2, mkcerts_mode, "mkcerts DIR COUNT   test CA store, key and certificate (certs.c)"},
    {"pem-certs", 1, 1, write_pem_certs, "pem-certs DIR   the TLS cases' CA, certificates and keys as PEM, for "
                                         "another backend's harness (tls_setup.c)"},
    {"quic-server", 0, SP_ANY_ARGS, quic_server, "quic-server DIR GROUP CERT MAX_CONNECTIONS [CONCURRENCY]"},
    {"quic-get", 0, SP_ANY_ARGS, quic_get, "quic-get PORT CA_FILE GROUP CERT COUNT [THREADS]"},
    {"quic-transfer-server", 3, 3, quic_transfer_server, "quic-transfer-server DIR SUITE SIZE"},
    {"quic-transfer-client", 5, 5, quic_transfer_client, "quic-transfer-client PORT CA_FILE SUITE SIZE MS"},
    {"threads", 3, 4, threads_run, "threads CASE THREADS MS [own|libctx|shared]"},
    {"check-config", 0, SP_ANY_ARGS, check_config, "check-config KEY=VALUE..."},
    {"transfer-server", 5, 5, transfer_server, "transfer-server DIR PROTO SUITE SIZE on|off"},
    {"transfer-client", 7, 7, transfer_client, "transfer-client PORT CA_FILE PROTO SUITE SIZE MS on|off"},
    {"quic-memory", 3, 3, quic_memory, "quic-memory GROUP CERT CONNECTIONS"},
    {"fetch", 2, 2, fetch_mode, "fetch digest|cipher|mac|signature|keyexch NAME"},
};
const size_t SP_N_BACKEND_COMMANDS = sizeof(SP_BACKEND_COMMANDS) / sizeof(SP_BACKEND_COMMANDS[0]);

void sp_backend_init(const char *command)
{
    if (strcmp(command, "memory") == 0 || strcmp(command, "quic-memory") == 0)
        memory_hooks_install();              /* before the library allocates anything */
#if SP_BSSL
    CRYPTO_library_init();
#else
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
#endif
    sp_provider_setup();
    sp_deterministic_setup();
}

const char *sp_library_version(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

#if defined(__x86_64__) || defined(__i386__)
/* The capability vector the library decided on (after OPENSSL_ia32cap).
 * Weak: a shared libcrypto does not export it, and then it is unknown. */
extern unsigned int OPENSSL_ia32cap_P[] __attribute__((weak));
#endif

void sp_backend_info(void)
{
    printf(",\"flavor\":");
    json_string(sp_flavor());
    printf(",\"version_string\":");
    json_string(OpenSSL_version(OPENSSL_VERSION));
    printf(",\"version_number\":%lu", (unsigned long)OPENSSL_VERSION_NUMBER);
    printf(",\"speed_aead_rekey\":%s", SP_SPEED_AEAD_REKEY ? "true" : "false");
    printf(",\"ia32cap\":");
#if defined(__x86_64__) || defined(__i386__)
    unsigned int *volatile cap = OPENSSL_ia32cap_P;   /* volatile: the weak symbol may be absent */
    if (cap != NULL) {
        char caps[80];
        snprintf(caps, sizeof(caps), "0x%08x%08x:0x%08x%08x", cap[1], cap[0], cap[3], cap[2]);
        json_string(caps);
    } else {
        printf("null");
    }
#else
    printf("null");
#endif
    sp_provider_info();
    printf(",\"deterministic_rand\":");
    json_string(sp_deterministic_state());
}

const char *sp_backend_no_thread_context(void)
{
    if (!SP_OSSL3)
        return "a library context per thread needs OpenSSL 3.0 or later (OSSL_LIB_CTX)";
    if (sp_fips_active())     /* a fresh context would load the default provider, not the FIPS one */
        return "a library context per thread would not have the FIPS provider; use own";
    return NULL;
}

void *sp_backend_thread_context(void)
{
#if SP_OSSL3
    OSSL_LIB_CTX *own = OSSL_LIB_CTX_new();
    if (own && !OSSL_LIB_CTX_set0_default(own)) {
        OSSL_LIB_CTX_free(own);
        own = NULL;
    }
    return own;
#else
    return NULL;
#endif
}

void sp_backend_thread_context_free(void *context)
{
#if SP_OSSL3
    OSSL_LIB_CTX_set0_default(NULL);
    OSSL_LIB_CTX_free(context);
#else
    (void)context;
#endif
}

void sp_backend_explain(prep_result *res)
{
    sp_provider_explain(res);
}

void sp_clear_errors(void)
{
    ERR_clear_error();
}

void sp_append_errors(char *text, size_t size)
{
    /* Say what the library said: its first queued error, if any, in parentheses. */
    unsigned long code = ERR_get_error();
    size_t used = strlen(text);
    if (code != 0 && used + 4 < size) {
        memcpy(text + used, " (", 3);
        ERR_error_string_n(code, text + used + 2, size - used - 3);
        used = strlen(text);
        if (used + 1 < size)
            memcpy(text + used, ")", 2);
    }
    ERR_clear_error();
}
