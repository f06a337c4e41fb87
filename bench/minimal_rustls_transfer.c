/* The least a program can do to move bulk data through rustls-ffi in memory,
 * written against rustls-ffi's C API alone, for bench/transfer_overhead.py:
 * one TLS 1.3 handshake with the one suite SUITE (a codepoint, e.g. 0x1301;
 * the client verifies against CAFILE for "localhost"), then again and again
 * the client writes SIZE bytes, its records go into a buffer, and the server
 * takes them in and reads SIZE bytes of plaintext out. Prints bytes per
 * second over MS.
 *
 *   minimal_rustls_transfer CERT KEY CAFILE SUITE SIZE MS */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rustls.h"

#define FAILED(result) ((result) != RUSTLS_RESULT_OK)

typedef struct {
    uint8_t *data;
    size_t len, off, cap;
} buffer;

static rustls_io_result put(void *userdata, const uint8_t *buf, size_t n, size_t *out_n)
{
    buffer *b = userdata;
    if (n > b->cap - b->len)
        n = b->cap - b->len;
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

static int flush(struct rustls_connection *conn, buffer *b)
{
    size_t n;
    while (rustls_connection_wants_write(conn))
        if (rustls_connection_write_tls(conn, put, b, &n) != 0 || n == 0)
            return 0;
    return 1;
}

static int drain(struct rustls_connection *conn, buffer *b)
{
    size_t n;
    while (b->off < b->len)
        if (rustls_connection_read_tls(conn, take, b, &n) != 0 || FAILED(rustls_connection_process_new_packets(conn)))
            return 0;
    b->len = b->off = 0;
    return 1;
}

/* The client writes `size` bytes, all of it into records; the server takes them in and reads `size` bytes out. */
static int transfer(struct rustls_connection *client, struct rustls_connection *server, buffer *pipe,
                    const uint8_t *out, uint8_t *in, size_t size)
{
    for (size_t sent = 0; sent < size;) {
        size_t n = 0;
        if (FAILED(rustls_connection_write(client, out + sent, size - sent, &n)) || !flush(client, pipe))
            return 0;
        sent += n;
    }
    for (size_t got = 0; got < size;) {
        size_t n = 0;
        unsigned int rc = rustls_connection_read(server, in + got, size - got, &n);
        if (rc == RUSTLS_RESULT_OK && n > 0) {
            got += n;
            continue;
        }
        if (rc != RUSTLS_RESULT_PLAINTEXT_EMPTY || pipe->off >= pipe->len
            || rustls_connection_read_tls(server, take, pipe, &n) != 0
            || FAILED(rustls_connection_process_new_packets(server)))
            return 0;
    }
    pipe->len = pipe->off = 0;
    return 1;
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

int main(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    size_t cert_len, key_len, size = strtoul(argv[5], NULL, 10);
    char *cert = slurp(argv[1], &cert_len), *key = slurp(argv[2], &key_len);
    uint16_t wanted = (uint16_t)strtoul(argv[4], NULL, 0), tls13 = RUSTLS_TLS_VERSION_TLSV1_3;
    const struct rustls_supported_ciphersuite *suite = NULL;
    for (size_t i = 0; i < rustls_default_crypto_provider_ciphersuites_len(); i++)
        if (rustls_supported_ciphersuite_get_suite(rustls_default_crypto_provider_ciphersuites_get(i)) == wanted)
            suite = rustls_default_crypto_provider_ciphersuites_get(i);
    struct rustls_crypto_provider_builder *pb = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    if (!suite || FAILED(rustls_crypto_provider_builder_new_from_default(&pb))
        || FAILED(rustls_crypto_provider_builder_set_cipher_suites(pb, &suite, 1))
        || FAILED(rustls_crypto_provider_builder_build(pb, &provider)))
        return 1;
    struct rustls_server_config_builder *sb = NULL;
    struct rustls_client_config_builder *cb = NULL;
    const struct rustls_certified_key *certified = NULL;
    const struct rustls_server_config *server_config = NULL;
    const struct rustls_client_config *client_config = NULL;
    struct rustls_root_cert_store_builder *rb = rustls_root_cert_store_builder_new();
    const struct rustls_root_cert_store *roots = NULL;
    struct rustls_server_cert_verifier *verifier = NULL;
    if (FAILED(rustls_server_config_builder_new_custom(provider, &tls13, 1, &sb))
        || FAILED(rustls_client_config_builder_new_custom(provider, &tls13, 1, &cb))
        || FAILED(rustls_certified_key_build((const uint8_t *)cert, cert_len, (const uint8_t *)key, key_len, &certified))
        || FAILED(rustls_server_config_builder_set_certified_keys(sb, &certified, 1))
        || FAILED(rustls_server_config_builder_build(sb, &server_config))
        || FAILED(rustls_root_cert_store_builder_load_roots_from_file(rb, argv[3], false))
        || FAILED(rustls_root_cert_store_builder_build(rb, &roots)))
        return 1;
    struct rustls_web_pki_server_cert_verifier_builder *vb = rustls_web_pki_server_cert_verifier_builder_new(roots);
    if (FAILED(rustls_web_pki_server_cert_verifier_builder_build(vb, &verifier)))
        return 1;
    rustls_client_config_builder_set_server_verifier(cb, verifier);
    if (FAILED(rustls_client_config_builder_build(cb, &client_config)))
        return 1;

    struct rustls_connection *client = NULL, *server = NULL;
    buffer to_server = {malloc(size + size / 8 + 65536), 0, 0, size + size / 8 + 65536};
    buffer to_client = {malloc(65536), 0, 0, 65536};
    if (FAILED(rustls_client_connection_new(client_config, "localhost", &client))
        || FAILED(rustls_server_connection_new(server_config, &server)))
        return 1;
    for (int round = 0; round < 16 && (rustls_connection_is_handshaking(client)
                                        || rustls_connection_is_handshaking(server) || to_client.len); round++)
        if (!flush(client, &to_server) || !drain(server, &to_server) || !flush(server, &to_client)
            || !drain(client, &to_client))
            return 1;
    uint8_t *out = malloc(size), *in = malloc(size);
    memset(out, 'x', size);

    struct timespec t0, t1;
    double limit = atof(argv[6]) / 1000.0, elapsed = 0;
    long count = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed < limit) {
        for (int i = 0; i < 16; i++, count++)            /* the clock read once per 16 writes, as the harness */
            if (!transfer(client, server, &to_server, out, in, size))
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("%.1f\n", (double)count * (double)size / elapsed);
    return 0;
}
