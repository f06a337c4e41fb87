/* Deterministic random bytes for the instruction tier (SSLPERF_DETERMINISTIC=1).
 *
 * Keys, nonces and signatures made from the library's own random generator
 * differ between processes, and some operations' costs follow them: Ed25519
 * verify of one random key against another is 0.7-0.9% apart. With this on,
 * every process draws the same stream, so it makes the same keys and inputs
 * and a count repeats exactly. The stream replaces the library's generator
 * everywhere (a keygen or a signature in the loop counts this generator, a
 * few instructions a byte, not the library's DRBG); it is never used to time.
 *
 * OpenSSL 1.1.1 and 3.x take it through RAND_set_rand_method (a FIPS module
 * keeps its own generator). BoringSSL, AWS-LC and LibreSSL have no such
 * hook; their inputs stay random and `info` says so. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "compat.h"
#include "backend.h"
#include "harness.h"
#include "families.h"

static int deterministic_on;

#if !SP_BSSL && !SP_LIBRESSL
static uint64_t stream_state = 0x53534c5045524631ull;   /* "SSLPERF1": the same in every process */

/* splitmix64: a fixed, well-mixed sequence; nothing here needs to be secret. */
static uint64_t next_word(void)
{
    uint64_t z = (stream_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int stream_bytes(unsigned char *out, int n)
{
    while (n > 0) {
        uint64_t word = next_word();
        int take = n < 8 ? n : 8;
        memcpy(out, &word, (size_t)take);
        out += take;
        n -= take;
    }
    return 1;
}

static int stream_seed(const void *buf, int n)
{
    (void)buf, (void)n;
    return 1;
}

static int stream_add(const void *buf, int n, double entropy)
{
    (void)buf, (void)n, (void)entropy;
    return 1;
}

static int stream_status(void)
{
    return 1;
}

static RAND_METHOD stream_method = {stream_seed, stream_bytes, NULL, stream_add, stream_bytes, stream_status};
#endif

void sp_deterministic_setup(void)
{
    const char *wanted = getenv("SSLPERF_DETERMINISTIC");
    if (wanted == NULL || strcmp(wanted, "1") != 0)
        return;
    /* A FIPS module makes its keys and nonces with its own generator, which
     * this hook does not reach: its counts are not deterministic, so say so. */
    if (getenv("SSLPERF_FIPS_CONFIG") != NULL)
        return;
#if !SP_BSSL && !SP_LIBRESSL
    deterministic_on = RAND_set_rand_method(&stream_method) == 1;
#endif
}

/* For `info`: "on", "off" (not asked for) or "unsupported" (asked for, but no hook in this library, or
 * a FIPS module with its own generator). */
const char *sp_deterministic_state(void)
{
    const char *wanted = getenv("SSLPERF_DETERMINISTIC");
    if (wanted == NULL || strcmp(wanted, "1") != 0)
        return "off";
    return deterministic_on ? "on" : "unsupported";
}
