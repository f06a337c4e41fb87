/* API differences between the libraries the harness is compiled against.
 *
 *   SP_OSSL3     OpenSSL 3.x/4.x: providers, EVP_*_fetch, EVP_MAC, OSSL_PARAM
 *   SP_OSSL_PQC  OpenSSL 3.5+: ML-KEM and ML-DSA through EVP_PKEY
 *   SP_OSSL_QUIC OpenSSL 3.5+ built with QUIC: its QUIC client and server
 *   SP_BSSL      BoringSSL or AWS-LC: EVP_AEAD, CRYPTO_poly1305, no providers
 *   SP_AWSLC     AWS-LC (ML-KEM/ML-DSA through EVP_PKEY_KEM / EVP_PKEY_PQDSA)
 *   SP_LIBRESSL  LibreSSL (1.1-style EVP; EVP_AEAD too)
 *
 * Everything else is the OpenSSL 1.1.1 API, which all of them share. */
#ifndef SSLPERF_COMPAT_H
#define SSLPERF_COMPAT_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#if defined(OPENSSL_IS_AWSLC)
#define SP_AWSLC 1
#else
#define SP_AWSLC 0
#endif

#if defined(OPENSSL_IS_BORINGSSL) || defined(OPENSSL_IS_AWSLC)
#define SP_BSSL 1
#include <openssl/aead.h>
#include <openssl/poly1305.h>
#else
#define SP_BSSL 0
#endif

#if defined(LIBRESSL_VERSION_NUMBER)
#define SP_LIBRESSL 1
#else
#define SP_LIBRESSL 0
#endif

#if !SP_BSSL && !SP_LIBRESSL && OPENSSL_VERSION_NUMBER >= 0x30000000L
#define SP_OSSL3 1
#include <openssl/core_names.h>
#include <openssl/params.h>
#else
#define SP_OSSL3 0
#endif

#if SP_OSSL3 && OPENSSL_VERSION_NUMBER >= 0x30500000L
#define SP_OSSL_PQC 1
#else
#define SP_OSSL_PQC 0
#endif

/* A QUIC server (SSL_new_listener) came with OpenSSL 3.5; BoringSSL's and AWS-LC's QUIC API needs a QUIC stack
 * of one's own, and LibreSSL has none. */
#if SP_OSSL3 && OPENSSL_VERSION_NUMBER >= 0x30500000L && !defined(OPENSSL_NO_QUIC)
#define SP_OSSL_QUIC 1
#else
#define SP_OSSL_QUIC 0
#endif

#if defined(OPENSSL_IS_BORINGSSL) && !defined(OPENSSL_IS_AWSLC)
#define SP_BORINGSSL 1
#else
#define SP_BORINGSSL 0
#endif

/* `openssl speed -evp` for GCM/CCM/OCB changed in 3.0.16, 3.1.8, 3.2.4, 3.3.3
 * and 3.4.1 (openssl PR #25823): every call re-keys and computes the tag.
 * Earlier releases stream one EVP_EncryptUpdate per call. */
#if SP_OSSL3 && (OPENSSL_VERSION_NUMBER >= 0x30400010L                                   \
                 || (OPENSSL_VERSION_NUMBER >= 0x30300030L && OPENSSL_VERSION_NUMBER < 0x30400000L) \
                 || (OPENSSL_VERSION_NUMBER >= 0x30200040L && OPENSSL_VERSION_NUMBER < 0x30300000L) \
                 || (OPENSSL_VERSION_NUMBER >= 0x30100080L && OPENSSL_VERSION_NUMBER < 0x30200000L) \
                 || (OPENSSL_VERSION_NUMBER >= 0x30000100L && OPENSSL_VERSION_NUMBER < 0x30100000L))
#define SP_SPEED_AEAD_REKEY 1
#else
#define SP_SPEED_AEAD_REKEY 0
#endif

static inline const char *sp_flavor(void)
{
#if SP_AWSLC
    return "aws-lc";
#elif SP_BSSL
    return "boringssl";
#elif SP_LIBRESSL
    return "libressl";
#else
    return "openssl";
#endif
}

#endif
