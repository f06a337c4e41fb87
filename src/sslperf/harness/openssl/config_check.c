/* harness check-config KEY=VALUE...: does this library accept these TLS
 * server settings, and what do they resolve to?  `sslperf recommend` never
 * prints a cipher string, group list or openssl.cnf the library would reject
 * or silently shrink (OpenSSL ignores unknown names in a cipher string as
 * long as one matches, so the resolved list is printed for the caller to
 * compare).
 *
 *   ciphers=STRING       SSL_CTX_set_cipher_list (BoringSSL/AWS-LC: the strict
 *                        variant, which understands [A|B] equal-preference groups)
 *   ciphersuites=STRING  TLS 1.3 suites (not BoringSSL: its are fixed)
 *   groups=STRING        SSL_CTX_set1_groups_list
 *   sigalgs=STRING       SSL_CTX_set1_sigalgs_list
 *   conf=FILE            an openssl.cnf; its system_default section is applied
 *
 * One JSON line: {"type":"config",...} or {"type":"error","key":...,"reason":...}.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/conf.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

static int fail(const char *key, const char *value, const char *why)
{
    char detail[256] = "";
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, detail, sizeof(detail));
    printf("{\"type\":\"error\",\"key\":");
    json_string(key);
    printf(",\"value\":");
    json_string(value);
    printf(",\"reason\":");
    json_string(detail[0] ? detail : why);
    printf("}\n");
    return 1;
}

static int apply(SSL_CTX *ctx, const char *key, const char *value)
{
    if (strcmp(key, "ciphers") == 0) {
#if SP_BSSL
        return SSL_CTX_set_strict_cipher_list(ctx, value) == 1;
#else
        return SSL_CTX_set_cipher_list(ctx, value) == 1;
#endif
    }
    if (strcmp(key, "ciphersuites") == 0) {
#if SP_BORINGSSL
        return -1;
#else
        return SSL_CTX_set_ciphersuites(ctx, value) == 1;
#endif
    }
    if (strcmp(key, "groups") == 0)
        return SSL_CTX_set1_groups_list(ctx, value) == 1;
    if (strcmp(key, "sigalgs") == 0)
        return SSL_CTX_set1_sigalgs_list(ctx, value) == 1;
    if (strcmp(key, "conf") == 0) {
#if SP_BSSL
        return -1;
#else
        return CONF_modules_load_file(value, NULL, 0) > 0 && SSL_CTX_config(ctx, "system_default") == 1;
#endif
    }
    return -2;
}

static void emit_config(SSL_CTX *ctx)
{
    STACK_OF(SSL_CIPHER) *ciphers = SSL_CTX_get_ciphers(ctx);
    printf("{\"type\":\"config\",\"ciphers\":[");
    for (size_t i = 0; ciphers && i < (size_t)sk_SSL_CIPHER_num(ciphers); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(ciphers, i);
        printf(i ? ",{\"name\":" : "{\"name\":");
        json_string(SSL_CIPHER_get_name(c));
        printf(",\"standard\":");
        json_string(SSL_CIPHER_standard_name(c));
        printf(",\"version\":");
        json_string(SSL_CIPHER_get_version(c));
        printf("}");
    }
    printf("],\"min_proto\":%d", (int)SSL_CTX_get_min_proto_version(ctx));
#ifdef SSL_OP_PRIORITIZE_CHACHA
    printf(",\"prioritize_chacha\":%s", (SSL_CTX_get_options(ctx) & SSL_OP_PRIORITIZE_CHACHA) ? "true" : "false");
#endif
#ifdef SSL_OP_CIPHER_SERVER_PREFERENCE
    printf(",\"server_preference\":%s",
           (SSL_CTX_get_options(ctx) & SSL_OP_CIPHER_SERVER_PREFERENCE) ? "true" : "false");
#endif
    printf("}\n");
}

int check_config(int argc, char **argv)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    int status = 0;
    if (!ctx)
        return fail("SSL_CTX_new", "", "the library could not make an SSL_CTX");
    for (int i = 0; i < argc && status == 0; i++) {
        char key[32];
        const char *eq = strchr(argv[i], '=');
        size_t len = eq ? (size_t)(eq - argv[i]) : 0;
        if (!eq || len == 0 || len >= sizeof(key)) {
            status = fail(argv[i], "", "arguments are KEY=VALUE");
            break;
        }
        memcpy(key, argv[i], len);
        key[len] = '\0';
        ERR_clear_error();
        switch (apply(ctx, key, eq + 1)) {
        case 1:
            break;
        case -1:
            status = fail(key, eq + 1, "this library has no such setting");
            break;
        case -2:
            status = fail(key, eq + 1, "unknown key: ciphers, ciphersuites, groups, sigalgs or conf");
            break;
        default:
            status = fail(key, eq + 1, "the library rejected it");
        }
    }
    if (status == 0)
        emit_config(ctx);
    SSL_CTX_free(ctx);
    return status;
}
