/* The provider a run asks for (OpenSSL 3.x). With SSLPERF_FIPS_CONFIG set,
 * the default library context loads that configuration, which activates the
 * FIPS provider (and the base provider, for key encodings) and nothing
 * else, and every fetch asks for fips=yes. The module checks its integrity
 * as it loads (and runs its known-answer tests unless its fipsmodule.cnf
 * records them as passed at install, as 3.0's does); if it does not come up,
 * or the default provider is active too, the harness refuses to run rather
 * than fall back. OPENSSL_MODULES names the directory the module is loaded
 * from; OPENSSL_CONF points at the same private configuration, so no other
 * openssl.cnf is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

#if defined(OPENSSL_IS_AWSLC)
#include <openssl/service_indicator.h>
#endif
#if SP_OSSL3
#include <openssl/core_names.h>
#include <openssl/provider.h>
#include <openssl/self_test.h>
#endif

static int fips_active;

int sp_fips_active(void)
{
    return fips_active;
}

#if SP_OSSL3
static int self_tests_passed, self_tests_failed;

static int count_self_tests(const OSSL_PARAM params[], void *arg)
{
    (void)arg;
    const OSSL_PARAM *phase = OSSL_PARAM_locate_const(params, OSSL_PROV_PARAM_SELF_TEST_PHASE);
    const char *value = NULL;
    if (phase != NULL && OSSL_PARAM_get_utf8_string_ptr(phase, &value)) {
        if (strcmp(value, OSSL_SELF_TEST_PHASE_PASS) == 0)
            self_tests_passed++;
        else if (strcmp(value, OSSL_SELF_TEST_PHASE_FAIL) == 0)
            self_tests_failed++;
    }
    return 1;
}
#endif

static void refuse(const char *why)
{
    printf("{\"type\":\"error\",\"reason\":");
    json_string(why);
    printf("}\n");
    fflush(stdout);
    exit(3);
}

void sp_provider_setup(void)
{
    const char *config = getenv("SSLPERF_FIPS_CONFIG");
    if (config == NULL || !*config)
        return;
#if SP_OSSL3
    char why[600];
    OSSL_SELF_TEST_set_callback(NULL, count_self_tests, NULL);
    if (!OSSL_LIB_CTX_load_config(NULL, config)) {
        snprintf(why, sizeof(why), "the FIPS configuration %s did not load", config);
        sp_append_errors(why, sizeof(why));
        refuse(why);
    }
    if (!OSSL_PROVIDER_available(NULL, "fips") || self_tests_failed) {
        snprintf(why, sizeof(why), "the FIPS provider did not come up (%d self-test%s failed)", self_tests_failed,
                 self_tests_failed == 1 ? "" : "s");
        sp_append_errors(why, sizeof(why));
        refuse(why);
    }
    if (OSSL_PROVIDER_available(NULL, "default"))
        refuse("the default provider is active beside the FIPS provider (an openssl.cnf activates it); "
               "sslperf runs FIPS columns with the FIPS and base providers only");
    if (!EVP_set_default_properties(NULL, "fips=yes"))
        refuse("cannot set the default properties to fips=yes");
    fips_active = 1;
#else
    (void)config;
    refuse("this library has no providers (OpenSSL 3.0 or later is needed for --provider fips)");
#endif
}

/* `,"provider":{...}` for the info reply: what the FIPS provider says of itself
 * (AWS-LC and BoringSSL: whether it is their FIPS module, FIPS_mode(), and their known-answer self-tests run
 * again now, BORINGSSL_self_test()). */
void sp_provider_info(void)
{
#if defined(OPENSSL_IS_AWSLC)
    if (FIPS_mode())
        printf(",\"provider\":{\"name\":\"fips\",\"description\":\"AWS-LC FIPS module\",\"version\":\"%s\","
               "\"self_test\":\"%s\"}", awslc_version_string(), BORINGSSL_self_test() ? "passed" : "failed");
#elif SP_BORINGSSL
    if (FIPS_mode())
        printf(",\"provider\":{\"name\":\"fips\",\"description\":\"BoringSSL FIPS module\",\"version\":\"%u\","
               "\"fips_mode\":1,\"self_test\":\"%s\"}", (unsigned)FIPS_version(),
               BORINGSSL_self_test() ? "passed" : "failed");
#endif
#if SP_OSSL3
    if (!fips_active)
        return;
    OSSL_PROVIDER *fips = OSSL_PROVIDER_load(NULL, "fips");     /* a reference to the loaded one */
    char *name = NULL, *version = NULL, *build = NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0),
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0),
        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &build, 0),
        OSSL_PARAM_construct_end(),
    };
    if (fips == NULL || !OSSL_PROVIDER_get_params(fips, params)) {
        OSSL_PROVIDER_unload(fips);
        return;
    }
    printf(",\"provider\":{\"name\":\"fips\",\"description\":");
    json_string(name ? name : "");
    printf(",\"version\":");
    json_string(version ? version : "");
    printf(",\"buildinfo\":");
    json_string(build ? build : "");
    printf(",\"self_tests_passed\":%d}", self_tests_passed);
    OSSL_PROVIDER_unload(fips);
#endif
}

/* A case the library calls n/a while only the FIPS provider serves it: say
 * which provider did not offer it. Errors stay errors: they are not the
 * module's choice and must not read as one. */
void sp_provider_explain(prep_result *res)
{
    if (!fips_active || res->status != PREP_NA)
        return;
    char original[REASON_MAX];
    snprintf(original, sizeof(original), "%s", res->reason);
    snprintf(res->reason, sizeof(res->reason), "not offered by the FIPS provider (fips=yes): %.200s", original);
}

/* `fetch digest|cipher|mac|signature|keyexch NAME`: which provider serves NAME
 * under this run's properties — the proof that an algorithm ran in the FIPS module. */
#if SP_OSSL3
/* One fetcher per kind of algorithm: the provider that serves NAME, or NULL.
 * The provider outlives the method, so its name stays readable after the free. */
#define FETCHER(kind, type, fetch, provider_of, release)                      \
    static const OSSL_PROVIDER *fetch_##kind(const char *name)               \
    {                                                                        \
        type *method = fetch(NULL, name, NULL);                              \
        const OSSL_PROVIDER *from = method ? provider_of(method) : NULL;     \
        release(method);                                                     \
        return from;                                                         \
    }
FETCHER(digest, EVP_MD, EVP_MD_fetch, EVP_MD_get0_provider, EVP_MD_free)
FETCHER(cipher, EVP_CIPHER, EVP_CIPHER_fetch, EVP_CIPHER_get0_provider, EVP_CIPHER_free)
FETCHER(mac, EVP_MAC, EVP_MAC_fetch, EVP_MAC_get0_provider, EVP_MAC_free)
FETCHER(signature, EVP_SIGNATURE, EVP_SIGNATURE_fetch, EVP_SIGNATURE_get0_provider, EVP_SIGNATURE_free)
FETCHER(keyexch, EVP_KEYEXCH, EVP_KEYEXCH_fetch, EVP_KEYEXCH_get0_provider, EVP_KEYEXCH_free)

static const struct {
    const char *name;
    const OSSL_PROVIDER *(*fetch)(const char *name);
} FETCHERS[] = {
    {"digest", fetch_digest}, {"cipher", fetch_cipher}, {"mac", fetch_mac},
    {"signature", fetch_signature}, {"keyexch", fetch_keyexch},
};
#endif

int fetch_mode(int argc, char **argv)
{
    (void)argc;
#if SP_OSSL3
    int kind = sp_find(argv[0], SP_ROWS(FETCHERS));
    if (kind < 0) {
        fprintf(stderr, "fetch: the kind is digest, cipher, mac, signature or keyexch\n");
        return 2;
    }
    ERR_clear_error();
    const OSSL_PROVIDER *from = FETCHERS[kind].fetch(argv[1]);
    printf("{\"type\":\"%s\",\"kind\":", from ? "fetched" : "refused");
    json_string(argv[0]);
    printf(",\"name\":");
    json_string(argv[1]);
    if (from) {
        printf(",\"provider\":");
        json_string(OSSL_PROVIDER_get0_name(from));
    } else {
        char why[400] = "no provider offers it under this run's properties";
        sp_append_errors(why, sizeof(why));
        printf(",\"reason\":");
        json_string(why);
    }
    printf("}\n");
#else
    (void)argv;
    printf("{\"type\":\"refused\",\"reason\":\"this library has no providers\"}\n");
#endif
    return 0;
}
