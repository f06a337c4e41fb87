/* The OpenSSL-API backend's families and commands, as backend.c and the
 * family files share them. */
#ifndef SSLPERF_OPENSSL_FAMILIES_H
#define SSLPERF_OPENSSL_FAMILIES_H

#include "harness.h"

prep_status prepare_cipher(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_digest(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_mac(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_pkey(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_api(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_tls(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_afalg(const case_name *name, bench_case *out, prep_result *res);
int make_certs(const char *dir, int count);
int quic_server(int argc, char **argv);     /* quic.c */
int quic_get(int argc, char **argv);
int quic_transfer_server(int argc, char **argv);   /* quic_transfer.c */
int quic_transfer_client(int argc, char **argv);
int check_config(int argc, char **argv);
int quic_memory(int argc, char **argv);   /* quic_memory.c */
int transfer_server(int argc, char **argv);   /* transfer_tcp.c */
int transfer_client(int argc, char **argv);
void memory_hooks_install(void);          /* memory.c: must run before the library allocates */
/* ---- the kernel's side of the cipher and digest tables (AF_ALG, afalg.c) ---- */

/* A row of CIPHERS (cipher.c) or DIGESTS (digest.c) that the Linux kernel also offers: the row's name, the
 * kernel's name for it (cbc(aes), sha256), the AF_ALG socket type (skcipher, aead, hash) and the key length
 * (0: a digest). */
typedef struct {
    const char *name, *kernel, *type;
    int key_len;
} kernel_alg;
/* The rows with a kernel name, at most `max` of them into `out`; returns how many. */
size_t cipher_kernel_algs(kernel_alg *out, size_t max);
size_t digest_kernel_algs(kernel_alg *out, size_t max);
/* The library's output for the same input the kernel gets: `len` bytes of `in` encrypted under `key` and
 * `iv` (an AEAD: with 13 bytes of `aad`, its 12-byte IV, the 16-byte tag after the ciphertext), or the
 * digest of `in` (its length in `*out_len`). n/a where the library or the size cannot. */
prep_status cipher_reference(const char *name, const unsigned char *key, const unsigned char *iv,
                             const unsigned char *aad, unsigned char *in, size_t len, unsigned char *out,
                             prep_result *res);
prep_status digest_reference(const char *name, const unsigned char *in, size_t len, unsigned char *out,
                             unsigned int *out_len, prep_result *res);

/* ---- providers (provider.c): --provider fips ---- */
void sp_provider_setup(void);          /* loads SSLPERF_FIPS_CONFIG, or refuses to run */
void sp_deterministic_setup(void);     /* SSLPERF_DETERMINISTIC=1: one random stream in every process (deterministic.c) */
void sp_provider_info(void);           /* ,"provider":{...} in the info reply */
void sp_provider_explain(prep_result *res);   /* a case the FIPS provider does not serve is n/a */
int sp_fips_active(void);
int fetch_mode(int argc, char **argv);
void list_cipher(void);
void list_digest(void);
void list_mac(void);
void list_pkey(void);    /* sig, kex, kem and keygen */
void list_api(void);
void list_tls(void);
void list_afalg(void);
void list_imported(void);   /* backend.c: families only imports of other tools hold */

/* The TLS cases' CA (ca.pem), and each certificate row's certificate (NAME.pem) and key (NAME.key), as PEM
 * files in DIR for a harness of another backend, which cannot make them (tls_setup.c). */
int pem_certs(const char *dir);

#endif
