/* sslperf library probe for wolfSSL: the smallest program that makes a TLS
 * client context and hashes a buffer through wolfCrypt. It prints what the
 * library says about itself as JSON (probe.c's fields). */
#include <stdio.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/sha256.h>

int main(void)
{
    unsigned char digest[WC_SHA256_DIGEST_SIZE];
    char hex[2 * WC_SHA256_DIGEST_SIZE + 1];
    wolfSSL_Init();
    WOLFSSL_CTX *ctx = wolfSSL_CTX_new(wolfSSLv23_client_method());
    int ok = ctx != NULL && wc_Sha256Hash((const unsigned char *)"abc", 3, digest) == 0;
    for (int i = 0; i < WC_SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    printf("{\"flavor\": \"wolfssl\", \"version_string\": \"wolfSSL %s\", \"version_number\": %lu, "
           "\"library_version\": \"%s\", \"sha256_abc\": \"%s\"}\n",
           wolfSSL_lib_version(), (unsigned long)wolfSSL_lib_version_hex(), wolfSSL_lib_version(), ok ? hex : "");
    wolfSSL_CTX_free(ctx);
    wolfSSL_Cleanup();
    return ok ? 0 : 1;
}
