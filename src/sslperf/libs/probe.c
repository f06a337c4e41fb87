/* sslperf library probe: the smallest program that sets up a TLS client and
 * hashes a buffer. It prints what the library says about itself as JSON, and
 * its own text/data size is the footprint a minimal TLS program pays. */
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/ssl.h>

static const char *flavor(void)
{
#if defined(OPENSSL_IS_AWSLC)
    return "aws-lc";
#elif defined(OPENSSL_IS_BORINGSSL)
    return "boringssl";
#elif defined(LIBRESSL_VERSION_NUMBER)
    return "libressl";
#else
    return "openssl";
#endif
}

static void json_string(const char *key, const char *value, int last)
{
    printf("\"%s\": \"", key);
    for (const char *p = value; p && *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        if ((unsigned char)*p >= 0x20)
            putchar(*p);
    }
    printf("\"%s", last ? "" : ", ");
}

int main(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1] = "";

    if (ssl == NULL || !EVP_Digest("abc", 3, md, &md_len, EVP_sha256(), NULL)) {
        fprintf(stderr, "probe: the library failed to set up a TLS client or hash a buffer\n");
        return 1;
    }
    for (unsigned int i = 0; i < md_len; i++)
        sprintf(hex + 2 * i, "%02x", md[i]);

    printf("{");
    json_string("flavor", flavor(), 0);
    json_string("version_string", OpenSSL_version(OPENSSL_VERSION), 0);
#if defined(OPENSSL_IS_AWSLC)
    json_string("library_version", AWSLC_VERSION_NUMBER_STRING, 0);
#elif defined(LIBRESSL_VERSION_TEXT)
    json_string("library_version", LIBRESSL_VERSION_TEXT, 0);
#endif
    printf("\"version_number\": %lu, ", (unsigned long)OPENSSL_VERSION_NUMBER);
    json_string("sha256_abc", hex, 1);
    printf("}\n");
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    return 0;
}
