/* The least a program can do to run wolfSSL TLS 1.3 handshakes in memory,
 * written against wolfSSL's API alone, for bench/handshake_overhead.py: one
 * client and one server context of TLS 1.3, TLS13-AES128-GCM-SHA256 and
 * X25519 (the client verifies against CAFILE for "localhost"), then per
 * handshake two WOLFSSL objects whose records move through two buffers, the
 * client's read of the session tickets, both freed. Prints handshakes per
 * second over MS.
 *
 *   minimal_wolfssl_handshake CERT KEY CAFILE MS */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

typedef struct {
    char data[1 << 16];
    int len, off;
} buffer;

static int put(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    buffer *b = ctx;
    if (b->off == b->len)
        b->off = b->len = 0;
    if (sz > (int)sizeof(b->data) - b->len)
        return WOLFSSL_CBIO_ERR_GENERAL;
    memcpy(b->data + b->len, buf, (size_t)sz);
    b->len += sz;
    return sz;
}

static int take(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    buffer *b = ctx;
    if (b->off == b->len)
        return WOLFSSL_CBIO_ERR_WANT_READ;
    int n = sz < b->len - b->off ? sz : b->len - b->off;
    memcpy(buf, b->data + b->off, (size_t)n);
    b->off += n;
    return n;
}

static int step(WOLFSSL *ssl, int server, int *done)
{
    int rc = server ? wolfSSL_accept(ssl) : wolfSSL_connect(ssl);
    if (rc == WOLFSSL_SUCCESS)
        return *done = 1;
    int err = wolfSSL_get_error(ssl, rc);
    return err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int groups[] = {WOLFSSL_ECC_X25519};
    wolfSSL_Init();
    WOLFSSL_CTX *sctx = wolfSSL_CTX_new(wolfTLSv1_3_server_method()), *cctx = wolfSSL_CTX_new(wolfTLSv1_3_client_method());
    if (!sctx || !cctx || wolfSSL_CTX_use_certificate_file(sctx, argv[1], WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_use_PrivateKey_file(sctx, argv[2], WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_load_verify_locations(cctx, argv[3], NULL) != WOLFSSL_SUCCESS)
        return 1;
    for (int i = 0; i < 2; i++) {
        WOLFSSL_CTX *ctx = i ? cctx : sctx;
        if (wolfSSL_CTX_set_cipher_list(ctx, "TLS13-AES128-GCM-SHA256") != WOLFSSL_SUCCESS
            || wolfSSL_CTX_set_groups(ctx, groups, 1) != WOLFSSL_SUCCESS)
            return 1;
        wolfSSL_CTX_SetIORecv(ctx, take);
        wolfSSL_CTX_SetIOSend(ctx, put);
    }
    wolfSSL_CTX_set_verify(cctx, WOLFSSL_VERIFY_PEER, NULL);

    static buffer to_server, to_client;
    struct timespec t0, t1;
    double limit = atof(argv[4]) / 1000.0, elapsed = 0;
    long done = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed < limit) {
        for (int i = 0; i < 16; i++, done++) {
            WOLFSSL *client = wolfSSL_new(cctx), *server = wolfSSL_new(sctx);
            int client_done = 0, server_done = 0, ok = client && server
                && wolfSSL_UseSNI(client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) == WOLFSSL_SUCCESS
                && wolfSSL_check_domain_name(client, "localhost") == WOLFSSL_SUCCESS;
            to_server.len = to_server.off = to_client.len = to_client.off = 0;
            wolfSSL_SetIOWriteCtx(client, &to_server);
            wolfSSL_SetIOReadCtx(client, &to_client);
            wolfSSL_SetIOWriteCtx(server, &to_client);
            wolfSSL_SetIOReadCtx(server, &to_server);
            while (ok && !(client_done && server_done)) {
                if (!client_done)
                    ok = step(client, 0, &client_done);
                if (ok && !server_done)
                    ok = step(server, 1, &server_done);
            }
            char byte;
            if (!ok || wolfSSL_read(client, &byte, 1) >= 0)      /* the tickets, then nothing to read */
                return 1;
            wolfSSL_free(client);
            wolfSSL_free(server);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("%.1f\n", (double)done / elapsed);
    return 0;
}
