/* What the minimal wolfSSL loops share (minimal_wolfssl_handshake.c, minimal_wolfssl_transfer.c), written
 * against wolfSSL's API alone: a buffer per direction that the I/O callbacks write to and read from, one
 * handshake step, and a server and a client context of TLS 1.3, one suite and X25519 (the client verifies
 * against CAFILE), as the harness configures them. */
#ifndef MINIMAL_WOLFSSL_H
#define MINIMAL_WOLFSSL_H

#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

typedef struct {
    char *data;
    size_t len, off, cap;
} buffer;

static buffer buffer_of(size_t cap)
{
    return (buffer){malloc(cap), 0, 0, cap};
}

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

/* The two contexts: TLS 1.3, the one suite `suite` (wolfSSL's name) and X25519, the server's certificate and key
 * from CERT and KEY, the client's CA file CAFILE; records through the buffers. 0 on a failure. */
static int make_contexts(const char *cert, const char *key, const char *cafile, const char *suite,
                         WOLFSSL_CTX **server, WOLFSSL_CTX **client)
{
    int groups[] = {WOLFSSL_ECC_X25519};
    wolfSSL_Init();
    *server = wolfSSL_CTX_new(wolfTLSv1_3_server_method());
    *client = wolfSSL_CTX_new(wolfTLSv1_3_client_method());
    if (!*server || !*client || wolfSSL_CTX_use_certificate_file(*server, cert, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_use_PrivateKey_file(*server, key, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS
        || wolfSSL_CTX_load_verify_locations(*client, cafile, NULL) != WOLFSSL_SUCCESS)
        return 0;
    for (int i = 0; i < 2; i++) {
        WOLFSSL_CTX *ctx = i ? *client : *server;
        if (wolfSSL_CTX_set_cipher_list(ctx, suite) != WOLFSSL_SUCCESS
            || wolfSSL_CTX_set_groups(ctx, groups, 1) != WOLFSSL_SUCCESS)
            return 0;
        wolfSSL_CTX_SetIORecv(ctx, take);
        wolfSSL_CTX_SetIOSend(ctx, put);
    }
    wolfSSL_CTX_set_verify(*client, WOLFSSL_VERIFY_PEER, NULL);
    return 1;
}

/* A client and a server over the two buffers, the handshake done and the client's session tickets taken; 0 on a
 * failure. */
static int connect_pair(WOLFSSL *client, WOLFSSL *server, buffer *to_server, buffer *to_client)
{
    if (!client || !server || wolfSSL_UseSNI(client, WOLFSSL_SNI_HOST_NAME, "localhost", 9) != WOLFSSL_SUCCESS
        || wolfSSL_check_domain_name(client, "localhost") != WOLFSSL_SUCCESS)
        return 0;
    to_server->len = to_server->off = to_client->len = to_client->off = 0;
    wolfSSL_SetIOWriteCtx(client, to_server);
    wolfSSL_SetIOReadCtx(client, to_client);
    wolfSSL_SetIOWriteCtx(server, to_client);
    wolfSSL_SetIOReadCtx(server, to_server);
    int client_done = 0, server_done = 0;
    for (int round = 0; round < 64 && !(client_done && server_done); round++)
        if ((!client_done && !step(client, 0, &client_done)) || (!server_done && !step(server, 1, &server_done)))
            return 0;
    char byte;
    return client_done && server_done && wolfSSL_read(client, &byte, 1) < 0;   /* the tickets, then nothing */
}

#endif
