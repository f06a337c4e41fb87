/* Test certificates, made by the library under test so nothing secret is
 * ever committed: `harness mkcerts DIR COUNT` writes, into DIR (which
 * sslperf creates private, mode 0700),
 *   ca-bundle.pem   COUNT self-signed CA certificates (EC P-256)
 *   ca-dir/HASH.N   the same certificates, one per file, named by subject hash
 *   key.pem         an RSA-2048 private key (PKCS#8 PEM)
 *   cert.pem        a self-signed certificate for it
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compat.h"
#include "harness.h"
#include "families.h"

#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

static EVP_PKEY *make_key(int rsa_bits)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(rsa_bits ? EVP_PKEY_RSA : EVP_PKEY_EC, NULL);
    EVP_PKEY *key = NULL;
    int ok = ctx && EVP_PKEY_keygen_init(ctx) > 0
             && (rsa_bits ? EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, rsa_bits)
                          : EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1)) > 0
             && EVP_PKEY_keygen(ctx, &key) > 0;
    EVP_PKEY_CTX_free(ctx);
    return ok ? key : NULL;
}

static X509 *self_signed(EVP_PKEY *key, const char *common_name, long serial)
{
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    int ok = cert && name && X509_set_version(cert, 2) && ASN1_INTEGER_set(X509_get_serialNumber(cert), serial)
             && X509_gmtime_adj(X509_getm_notBefore(cert), -3600)
             && X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 365)
             && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"sslperf test", -1, -1, 0)
             && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)common_name, -1, -1, 0)
             && X509_set_subject_name(cert, name) && X509_set_issuer_name(cert, name) && X509_set_pubkey(cert, key)
             && X509_sign(cert, key, EVP_sha256()) > 0;
    X509_NAME_free(name);
    if (!ok) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

static int write_pem(const char *path, X509 *cert, EVP_PKEY *key, const char *mode)
{
    FILE *f = fopen(path, mode);
    int ok = f != NULL;
    if (ok && cert)
        ok = PEM_write_X509(f, cert);
    if (ok && key)
        ok = PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

int make_certs(const char *dir, int count)
{
    char path[1024];
    EVP_PKEY *ca_key = make_key(0), *server_key = make_key(2048);
    int ok = ca_key && server_key;

    snprintf(path, sizeof(path), "%s/ca-dir", dir);
    ok = ok && (mkdir(path, 0700) == 0 || errno == EEXIST);
    snprintf(path, sizeof(path), "%s/ca-bundle.pem", dir);
    FILE *truncate = ok ? fopen(path, "w") : NULL;
    ok = ok && truncate && fclose(truncate) == 0;
    for (int i = 0; ok && i < count; i++) {
        char cn[64];
        snprintf(cn, sizeof(cn), "sslperf test CA %d", i + 1);
        X509 *cert = self_signed(ca_key, cn, i + 1);
        ok = cert != NULL;
        snprintf(path, sizeof(path), "%s/ca-bundle.pem", dir);
        ok = ok && write_pem(path, cert, NULL, "a");
        if (ok) {
            /* The hashed-directory name OpenSSL's by_dir lookup expects. */
            snprintf(path, sizeof(path), "%s/ca-dir/%08lx.0", dir, (unsigned long)X509_subject_name_hash(cert));
            ok = write_pem(path, cert, NULL, "w");
        }
        X509_free(cert);
    }
    X509 *server_cert = ok ? self_signed(server_key, "localhost", 1000) : NULL;
    snprintf(path, sizeof(path), "%s/key.pem", dir);
    ok = ok && server_cert && write_pem(path, NULL, server_key, "w");
    snprintf(path, sizeof(path), "%s/cert.pem", dir);
    ok = ok && write_pem(path, server_cert, NULL, "w");
    X509_free(server_cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(server_key);
    return ok;
}
