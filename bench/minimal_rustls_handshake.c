/* The least a program can do to run rustls-ffi TLS 1.3 handshakes in memory,
 * written against rustls-ffi's C API alone, for bench/handshake_overhead.py:
 * one client and one server config of TLS 1.3 and TLS_AES_128_GCM_SHA256 only
 * (the server keeps no session and sends no ticket, the client verifies
 * against CAFILE for "localhost"), then per
 * handshake two connections, records moved by two buffers until neither side
 * has anything to send, both freed. Prints handshakes per second over MS.
 *
 *   minimal_rustls_handshake CERT KEY CAFILE MS */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rustls.h"

#define FAILED(result) ((result) != RUSTLS_RESULT_OK)     /* rustls_result: 7000 is OK; I/O results: 0 */

typedef struct {
    uint8_t data[1 << 16];
    size_t len, off;
} buffer;

static rustls_io_result put(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    buffer *b = userdata;
    if (n > sizeof(b->data) - b->len)
        n = sizeof(b->data) - b->len;
    memcpy(b->data + b->len, buf, n);
    b->len += n;
    *out_n = n;
    return 0;
}

static rustls_io_result take(void *userdata, uint8_t *buf, size_t n, size_t *out_n)
{
    buffer *b = userdata;
    if (n > b->len - b->off)
        n = b->len - b->off;
    memcpy(buf, b->data + b->off, n);
    b->off += n;
    *out_n = n;
    return 0;
}

static uint32_t no_get(void *u, const struct rustls_slice_bytes *k, int r, uint8_t *b, size_t c, size_t *o)
{
    (void)u, (void)k, (void)r, (void)b, (void)c, (void)o;
    return RUSTLS_RESULT_NOT_FOUND;
}

static uint32_t no_put(void *u, const struct rustls_slice_bytes *k, const struct rustls_slice_bytes *v)
{
    (void)u, (void)k, (void)v;
    return RUSTLS_RESULT_NOT_FOUND;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    static char buf[2][1 << 16];
    static int which;
    char *out = buf[which++];
    *len = f ? fread(out, 1, sizeof(buf[0]), f) : 0;
    if (f)
        fclose(f);
    return out;
}

/* Both directions until neither side writes anything; 0 on a failure. */
static int exchange(struct rustls_connection *client, struct rustls_connection *server, buffer *to_server,
                    buffer *to_client)
{
    for (int round = 0; round < 16; round++) {
        size_t n, moved = 0;
        to_server->len = to_server->off = to_client->len = to_client->off = 0;
        while (rustls_connection_wants_write(client) && rustls_connection_write_tls(client, put, to_server, &n) == 0 && n)
            moved += n;
        while (to_server->off < to_server->len)
            if (rustls_connection_read_tls(server, take, to_server, &n) || FAILED(rustls_connection_process_new_packets(server)))
                return 0;
        while (rustls_connection_wants_write(server) && rustls_connection_write_tls(server, put, to_client, &n) == 0 && n)
            moved += n;
        while (to_client->off < to_client->len)
            if (rustls_connection_read_tls(client, take, to_client, &n) || FAILED(rustls_connection_process_new_packets(client)))
                return 0;
        if (!moved)
            return !rustls_connection_is_handshaking(client) && !rustls_connection_is_handshaking(server);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    size_t cert_len, key_len;
    char *cert = slurp(argv[1], &cert_len), *key = slurp(argv[2], &key_len);
    const struct rustls_certified_key *certified = NULL;
    /* The harness's settings: TLS 1.3, and one suite (rustls would pick AES-256-GCM with SHA-384 first). */
    struct rustls_crypto_provider_builder *pb = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    const struct rustls_supported_ciphersuite *suite = NULL;
    uint16_t tls13 = RUSTLS_TLS_VERSION_TLSV1_3;
    for (size_t i = 0; i < rustls_default_crypto_provider_ciphersuites_len(); i++)
        if (rustls_supported_ciphersuite_get_suite(rustls_default_crypto_provider_ciphersuites_get(i)) == 0x1301)
            suite = rustls_default_crypto_provider_ciphersuites_get(i);
    if (!suite || FAILED(rustls_crypto_provider_builder_new_from_default(&pb))
        || FAILED(rustls_crypto_provider_builder_set_cipher_suites(pb, &suite, 1))
        || FAILED(rustls_crypto_provider_builder_build(pb, &provider)))
        return 1;
    struct rustls_server_config_builder *sb = NULL;
    struct rustls_client_config_builder *cb = NULL;
    if (FAILED(rustls_server_config_builder_new_custom(provider, &tls13, 1, &sb))
        || FAILED(rustls_client_config_builder_new_custom(provider, &tls13, 1, &cb)))
        return 1;
    const struct rustls_server_config *server_config = NULL;
    struct rustls_root_cert_store_builder *rb = rustls_root_cert_store_builder_new();
    const struct rustls_root_cert_store *roots = NULL;
    struct rustls_server_cert_verifier *verifier = NULL;
    const struct rustls_client_config *client_config = NULL;
    if (FAILED(rustls_certified_key_build((const uint8_t *)cert, cert_len, (const uint8_t *)key, key_len, &certified))
        || FAILED(rustls_server_config_builder_set_certified_keys(sb, &certified, 1)))
        return 1;
    rustls_server_config_builder_set_persistence(sb, no_get, no_put);
    rustls_server_config_builder_set_send_tls13_tickets(sb, 0);
    if (FAILED(rustls_server_config_builder_build(sb, &server_config))
        || FAILED(rustls_root_cert_store_builder_load_roots_from_file(rb, argv[3], false))
        || FAILED(rustls_root_cert_store_builder_build(rb, &roots)))
        return 1;
    struct rustls_web_pki_server_cert_verifier_builder *vb = rustls_web_pki_server_cert_verifier_builder_new(roots);
    if (FAILED(rustls_web_pki_server_cert_verifier_builder_build(vb, &verifier)))
        return 1;
    rustls_client_config_builder_set_server_verifier(cb, verifier);
    if (FAILED(rustls_client_config_builder_build(cb, &client_config)))
        return 1;

    static buffer to_server, to_client;
    struct timespec t0, t1;
    double limit = atof(argv[4]) / 1000.0, elapsed = 0;
    long done = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed < limit) {
        for (int i = 0; i < 16; i++, done++) {
            struct rustls_connection *client = NULL, *server = NULL;
            if (FAILED(rustls_client_connection_new(client_config, "localhost", &client))
                || FAILED(rustls_server_connection_new(server_config, &server))
                || !exchange(client, server, &to_server, &to_client))
                return 1;
            rustls_connection_free(client);
            rustls_connection_free(server);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("%.1f\n", (double)done / elapsed);
    return 0;
}
