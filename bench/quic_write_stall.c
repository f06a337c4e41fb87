/* One QUIC stream that stops moving, with nothing but OpenSSL's public API (3.5+): the reproducer of the stall that
 * sslperf's quic-transfer rows show with writes of 128 KiB or more (docs/findings.md).
 *
 *   cc -O2 -std=c11 -o quic_write_stall bench/quic_write_stall.c -I PREFIX/include PREFIX/lib/libssl.a \
 *       PREFIX/lib/libcrypto.a -lpthread -ldl          (PREFIX: a built library's, ~/.cache/sslperf/libs/.../prefix)
 *   ./quic_write_stall server READ                      prints the port; reads the stream READ bytes at a time
 *   ./quic_write_stall client PORT SIZE MS [GROUPS]     SIZE-byte writes for MS ms; GROUPS: the client's group list
 *
 * The server listens on 127.0.0.1 (UDP, a non-blocking listener, the connection then blocking), reads one stream to
 * its end and writes back the byte count. The client (no certificate check: a reproducer, not a measurement) makes
 * blocking writes on one stream, concludes it and reads the count. Prints "ok ..." or "stalled after ..." (a write
 * or the count took over 20 s). bench/quic_write_stall.py runs the pair many times and counts the stalls. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/quic.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static const unsigned char ALPN[] = "\x04test";
static volatile unsigned long long sent;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int select_alpn(SSL *s, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                       unsigned int inlen, void *arg)
{
    (void)s, (void)arg;
    return SSL_select_next_proto((unsigned char **)out, outlen, ALPN, sizeof(ALPN) - 1, in, inlen)
           == OPENSSL_NPN_NEGOTIATED ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* A self-signed P-256 certificate, TLS_AES_128_GCM_SHA256 only. */
static SSL_CTX *server_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(OSSL_QUIC_server_method());
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
    SSL_CTX_use_certificate(ctx, cert);
    SSL_CTX_use_PrivateKey(ctx, key);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
    return ctx;
}

static int server(size_t read_size)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || getsockname(fd, (struct sockaddr *)&addr, &len))
        return 1;
    printf("%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    SSL *listener = SSL_new_listener(server_ctx(), 0), *conn = NULL;
    if (!listener || !SSL_set_fd(listener, fd) || !SSL_set_blocking_mode(listener, 0) || !SSL_listen(listener))
        return 1;
    while (!(conn = SSL_accept_connection(listener, SSL_ACCEPT_CONNECTION_NO_BLOCK))) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        poll(&pfd, 1, 20);
        SSL_handle_events(listener);
    }
    SSL_set_blocking_mode(conn, 1);
    SSL *stream = SSL_accept_stream(conn, 0);
    unsigned char *buf = malloc(read_size);
    size_t got = 0;
    unsigned long long total = 0;
    while (stream && buf && SSL_read_ex(stream, buf, read_size, &got))
        total += got;
    char count[32];
    size_t written = 0;
    snprintf(count, sizeof(count), "%llu", total);
    SSL_write_ex2(stream, count, strlen(count), SSL_WRITE_FLAG_CONCLUDE, &written);
    SSL_shutdown_ex(conn, SSL_SHUTDOWN_FLAG_WAIT_PEER, NULL, 0);
    return 0;
}

static void on_alarm(int sig)
{
    (void)sig;
    printf("stalled after %llu bytes written\n", sent);
    fflush(stdout);
    _exit(3);
}

static int client(int port, size_t size, double ms, const char *groups)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    SSL_CTX *ctx = SSL_CTX_new(OSSL_QUIC_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    if (groups && !SSL_CTX_set1_groups_list(ctx, groups))
        return 2;
    SSL *ssl = SSL_new(ctx);
    BIO_ADDR *peer = BIO_ADDR_new();
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || !ssl || !peer
        || !BIO_ADDR_rawmake(peer, AF_INET, &addr.sin_addr, sizeof(addr.sin_addr), addr.sin_port)
        || !SSL_set_fd(ssl, fd) || !SSL_set1_initial_peer_addr(ssl, peer)
        || SSL_set_alpn_protos(ssl, ALPN, sizeof(ALPN) - 1) != 0 || SSL_connect(ssl) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    unsigned char *out = malloc(size);
    if (!out)
        return 1;
    for (size_t i = 0; i < size; i++)
        out[i] = (unsigned char)(i * 7);
    signal(SIGALRM, on_alarm);
    for (double end = now() + ms / 1000; now() < end; sent += size) {
        alarm(20);                                  /* no write may take 20 s */
        for (size_t done = 0, n = 0; done < size; done += n)
            if (!SSL_write_ex(ssl, out + done, size - done, &n))
                return 1;
    }
    alarm(20);
    char count[32] = "";
    size_t got = 0;
    SSL_stream_conclude(ssl, 0);
    SSL_read_ex(ssl, count, sizeof(count) - 1, &got);
    alarm(0);
    printf("ok %llu bytes written, %s read\n", sent, count);
    SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return server(strtoul(argv[2], NULL, 10));
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "client") == 0)
        return client(atoi(argv[2]), strtoul(argv[3], NULL, 10), atof(argv[4]), argc == 6 ? argv[5] : NULL);
    fprintf(stderr, "usage: %s server READ | client PORT SIZE MS [GROUPS]\n", argv[0]);
    return 2;
}
