/* What the minimal rustls loops share (minimal_rustls_handshake.c, minimal_rustls_transfer.c), written
 * against rustls-ffi's C API alone: a buffer per direction that records move through, and a server and a
 * client config of TLS 1.3 with one suite (the server keeps no session and sends no ticket; the client
 * verifies against CAFILE), as the harness configures them. */
#ifndef MINIMAL_RUSTLS_H
#define MINIMAL_RUSTLS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rustls.h"

#define FAILED(result) ((result) != RUSTLS_RESULT_OK)     /* rustls_result: 7000 is OK; I/O results: 0 */

typedef struct {
    uint8_t *data;
    size_t len, off, cap;
} buffer;

static buffer buffer_of(size_t cap)
{
    return (buffer){malloc(cap), 0, 0, cap};
}

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

/* Everything `conn` has to send, into `b`; 0 when it does not fit. */
static int flush(struct rustls_connection *conn, buffer *b)
{
    size_t n;
    while (rustls_connection_wants_write(conn))
        if (rustls_connection_write_tls(conn, put, b, &n) != 0 || n == 0)
            return 0;
    return 1;
}

/* Everything in `b`, read and processed by `conn`. */
static int drain(struct rustls_connection *conn, buffer *b)
{
    size_t n;
    while (b->off < b->len)
        if (rustls_connection_read_tls(conn, take, b, &n) != 0 || FAILED(rustls_connection_process_new_packets(conn)))
            return 0;
    b->len = b->off = 0;
    return 1;
}

/* Both directions until neither side sends anything; 1 when both have finished the handshake. */
static int exchange(struct rustls_connection *client, struct rustls_connection *server, buffer *to_server,
                    buffer *to_client)
{
    for (int round = 0; round < 16; round++) {
        if (!flush(client, to_server))
            return 0;
        size_t moved = to_server->len;
        if (!drain(server, to_server) || !flush(server, to_client))
            return 0;
        moved += to_client->len;
        if (!drain(client, to_client))
            return 0;
        if (!moved)
            return !rustls_connection_is_handshaking(client) && !rustls_connection_is_handshaking(server);
    }
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

/* The two configs: TLS 1.3 and the one suite `wanted` (rustls would pick AES-256-GCM with SHA-384 first), the
 * server's certificate and key from CERT and KEY, the client's roots from CAFILE; 0 on a failure. */
static int make_configs(const char *cert_path, const char *key_path, const char *cafile, uint16_t wanted,
                        const struct rustls_server_config **server_config,
                        const struct rustls_client_config **client_config)
{
    size_t cert_len, key_len;
    char *cert = slurp(cert_path, &cert_len), *key = slurp(key_path, &key_len);
    uint16_t tls13 = RUSTLS_TLS_VERSION_TLSV1_3;
    const struct rustls_supported_ciphersuite *suite = NULL;
    for (size_t i = 0; i < rustls_default_crypto_provider_ciphersuites_len(); i++)
        if (rustls_supported_ciphersuite_get_suite(rustls_default_crypto_provider_ciphersuites_get(i)) == wanted)
            suite = rustls_default_crypto_provider_ciphersuites_get(i);
    struct rustls_crypto_provider_builder *pb = NULL;
    const struct rustls_crypto_provider *provider = NULL;
    if (!suite || FAILED(rustls_crypto_provider_builder_new_from_default(&pb))
        || FAILED(rustls_crypto_provider_builder_set_cipher_suites(pb, &suite, 1))
        || FAILED(rustls_crypto_provider_builder_build(pb, &provider)))
        return 0;
    struct rustls_server_config_builder *sb = NULL;
    struct rustls_client_config_builder *cb = NULL;
    const struct rustls_certified_key *certified = NULL;
    struct rustls_root_cert_store_builder *rb = rustls_root_cert_store_builder_new();
    const struct rustls_root_cert_store *roots = NULL;
    struct rustls_server_cert_verifier *verifier = NULL;
    if (FAILED(rustls_server_config_builder_new_custom(provider, &tls13, 1, &sb))
        || FAILED(rustls_client_config_builder_new_custom(provider, &tls13, 1, &cb))
        || FAILED(rustls_certified_key_build((const uint8_t *)cert, cert_len, (const uint8_t *)key, key_len,
                                             &certified))
        || FAILED(rustls_server_config_builder_set_certified_keys(sb, &certified, 1)))
        return 0;
    rustls_server_config_builder_set_persistence(sb, no_get, no_put);
    rustls_server_config_builder_set_send_tls13_tickets(sb, 0);
    if (FAILED(rustls_server_config_builder_build(sb, server_config))
        || FAILED(rustls_root_cert_store_builder_load_roots_from_file(rb, cafile, false))
        || FAILED(rustls_root_cert_store_builder_build(rb, &roots)))
        return 0;
    struct rustls_web_pki_server_cert_verifier_builder *vb = rustls_web_pki_server_cert_verifier_builder_new(roots);
    if (FAILED(rustls_web_pki_server_cert_verifier_builder_build(vb, &verifier)))
        return 0;
    rustls_client_config_builder_set_server_verifier(cb, verifier);
    return !FAILED(rustls_client_config_builder_build(cb, client_config));
}

#endif
