/* The least a program can do to move bulk data through wolfSSL in memory,
 * written against wolfSSL's API alone, for bench/transfer_overhead.py: one
 * TLS 1.3 handshake with the one suite SUITE (wolfSSL's name, e.g.
 * TLS13-AES128-GCM-SHA256) and X25519 (the client verifies against CAFILE
 * for "localhost"), then again and again the client writes SIZE bytes into a
 * buffer through the I/O callbacks and the server reads SIZE bytes out.
 * Prints bytes per second over MS.
 *
 *   minimal_wolfssl_transfer CERT KEY CAFILE SUITE SIZE MS */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

typedef struct {
    char *data;
    size_t len, off, cap;
} buffer;

static int put(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    buffer *b = ctx;
    if (b->off == b->len)
        b->off = b->len = 0;
    if ((size_t)sz > b->cap - b->len)
        return WOLFSSL_CBIO_ERR_GENERAL;
    memcpy(b->data + b->len, buf, (size_t)sz);
    b->len += (size_t)sz;
    return sz;
}

static int take(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
    (void)ssl;
    buffer *b = ctx;
    if (b->off == b->len)
        return WOLFSSL_CBIO_ERR_WANT_READ;
    size_t n = (size_t)sz < b->len - b->off ? (size_t)sz : b->len - b->off;
    memcpy(buf, b->data + b->off, n);
    b->off += n;
    return (int)n;
}

static int step(WOLFSSL *ssl, int server, int *done)
{
    int rc = server ? wolfSSL_accept(ssl) : wolfSSL_connect(ssl);
    if (rc == WOLFSSL_SUCCESS)
        return *done = 1;
    int err = wolfSSL_get_error(ssl, rc);
    return err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE;
}

/* The client writes `size` bytes (into records in the pipe), the server reads `size` bytes out. */
static int transfer(WOLFSSL *client, WOLFSSL *server, const char *out, char *in, size_t size)
{
    for (size_t sent = 0; sent < size;) {
        int n = wolfSSL_write(client, out + sent, (int)(size - sent));
        if (n <= 0)
            return 0;
        sent += (size_t)n;
    }
    for (size_t got = 0; got < size;) {
        int n = wolfSSL_read(server, in + got, (int)(size - got));
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    size_t size = strtoul(argv[5], NULL, 10);
    int groups[] = {WOLFSSL_ECC_X25519};
    wolfSSL_Init();
    WOLFSSL_CTX *sctx = wolfSSL_CTX_new(wolfTLSv1_3_server_method()), *cctx = wolfSSL_CTX_new(wolfTLSv1_3_client_method());
    if (!sctx || !cctx || wolfSSL_CTX_use_certificate_file(sctx, argv[1], WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_use_PrivateKey_file(sctx, argv[2], WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_load_verify_locations(cctx, argv[3], NULL) != WOLFSSL_SUCCESS)
        return 1;
    for (int i = 0; i < 2; i++) {
        WOLFSSL_CTX *ctx = i ? cctx : sctx;
        if (wolfSSL_CTX_set_cipher_list(ctx, argv[4]) != WOLFSSL_SUCCESS
            || wolfSSL_CTX_set_groups(ctx, groups, 1) != WOLFSSL_SUCCESS)
            return 1;
        wolfSSL_CTX_SetIORecv(ctx, take);
        wolfSSL_CTX_SetIOSend(ctx, put);
    }
    wolfSSL_CTX_set_verify(cctx, WOLFSSL_VERIFY_PEER, NULL);

    buffer to_server = {malloc(size + size / 8 + 65536), 0, 0, size + size / 8 + 65536};
    buffer to_client = {malloc(65536), 0, 0, 65536};
    WOLFSSL *client = wolfSSL_new(cctx), *server = wolfSSL_new(sctx);
    if (!client || !server || wolfSSL_UseSNI(client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) != WOLFSSL_SUCCESS
        || wolfSSL_check_domain_name(client, "localhost") != WOLFSSL_SUCCESS)
        return 1;
    wolfSSL_SetIOWriteCtx(client, &to_server);
    wolfSSL_SetIOReadCtx(client, &to_client);
    wolfSSL_SetIOWriteCtx(server, &to_client);
    wolfSSL_SetIOReadCtx(server, &to_server);
    int client_done = 0, server_done = 0;
    for (int round = 0; round < 64 && !(client_done && server_done); round++)
        if ((!client_done && !step(client, 0, &client_done)) || (!server_done && !step(server, 1, &server_done)))
            return 1;
    char byte, *out = malloc(size), *in = malloc(size);
    if (!client_done || !server_done || wolfSSL_read(client, &byte, 1) > 0)     /* the client takes its tickets */
        return 1;
    memset(out, 'x', size);

    struct timespec t0, t1;
    double limit = atof(argv[6]) / 1000.0, elapsed = 0;
    long count = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed < limit) {
        for (int i = 0; i < 16; i++, count++)            /* the clock read once per 16 writes, as the harness */
            if (!transfer(client, server, out, in, size))
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("%.1f\n", (double)count * (double)size / elapsed);
    return 0;
}
