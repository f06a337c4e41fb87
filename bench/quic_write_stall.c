/* Does one QUIC stream stall under large writes with nothing but OpenSSL (3.5+)? The harness's quic-transfer does
 * with writes of 128 KiB or more (docs/findings.md); this is the same pattern without the harness, to tell whose the
 * stall is.
 *
 *   cc -O2 -std=c11 -o quic_write_stall bench/quic_write_stall.c -I PREFIX/include PREFIX/lib/libssl.a \
 *       PREFIX/lib/libcrypto.a -lpthread -ldl          (PREFIX: a built library's, ~/.cache/sslperf/libs/.../prefix)
 *   ./quic_write_stall SIZE MS                          (SUITE=... chooses the TLS 1.3 suite)
 *
 * A child process serves on 127.0.0.1 (UDP) as the harness does: a non-blocking listener, the connection then
 * blocking, its first stream read to the end with every byte compared, the count written back. The parent connects
 * (no certificate check: a reproducer, not a measurement), writes SIZE-byte blocking writes for MS milliseconds on
 * one stream, concludes it and reads the count. Prints "ok ..." or "stalled after ..." (a write or the count took
 * over 30 s). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

static SSL_CTX *server_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(OSSL_QUIC_server_method());
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC, (unsigned char *)"localhost", -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
    SSL_CTX_use_certificate(ctx, cert);
    SSL_CTX_use_PrivateKey(ctx, key);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    SSL_CTX_set_ciphersuites(ctx, getenv("SUITE") ? getenv("SUITE") : "TLS_AES_128_GCM_SHA256");
    return ctx;
}

static void on_alarm(int sig)
{
    (void)sig;
    printf("stalled after %llu bytes written\n", sent);
    fflush(stdout);
    _exit(3);
}

static int serve(int fd)
{
    SSL_CTX *ctx = server_ctx();
    SSL *listener = SSL_new_listener(ctx, 0);
    if (!listener || !SSL_set_fd(listener, fd) || !SSL_set_blocking_mode(listener, 0) || !SSL_listen(listener))
        return 1;
    SSL *conn = NULL;
    while (!(conn = SSL_accept_connection(listener, SSL_ACCEPT_CONNECTION_NO_BLOCK)))
        SSL_handle_events(listener);
    SSL_set_blocking_mode(conn, 1);
    SSL *stream = SSL_accept_stream(conn, 0);
    if (!stream)
        return 1;
    static unsigned char buf[1 << 20];
    size_t got = 0;
    unsigned long long total = 0;
    static unsigned char expect[1 << 20];
    unsigned long long differing = 0;
    while (SSL_read_ex(stream, buf, sizeof(buf), &got)) {
        differing += memcmp(buf, expect, got) != 0;       /* a reader that checks what it reads, as a real one would */
        total += got;
    }
    (void)differing;
    char count[32];
    size_t written = 0;
    snprintf(count, sizeof(count), "%llu", total);
    SSL_write_ex2(stream, count, strlen(count), SSL_WRITE_FLAG_CONCLUDE, &written);
    SSL_shutdown_ex(conn, SSL_SHUTDOWN_FLAG_WAIT_PEER, NULL, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    size_t size = strtoul(argv[1], NULL, 10);
    double ms = atof(argv[2]);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    int sfd = socket(AF_INET, SOCK_DGRAM, 0);
    if (bind(sfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || getsockname(sfd, (struct sockaddr *)&addr, &len))
        return 1;
    pid_t child = fork();
    if (child == 0) {
        alarm(120);
        _exit(serve(sfd));
    }
    close(sfd);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    connect(fd, (struct sockaddr *)&addr, sizeof(addr));
    SSL_CTX *ctx = SSL_CTX_new(OSSL_QUIC_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL *ssl = SSL_new(ctx);
    BIO_ADDR *peer = BIO_ADDR_new();
    BIO_ADDR_rawmake(peer, AF_INET, &addr.sin_addr, sizeof(addr.sin_addr), addr.sin_port);
    SSL_set_fd(ssl, fd);
    SSL_set1_initial_peer_addr(ssl, peer);
    SSL_set_alpn_protos(ssl, ALPN, sizeof(ALPN) - 1);
    if (SSL_connect(ssl) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    unsigned char *out = calloc(1, size);
    signal(SIGALRM, on_alarm);
    double end = now() + ms / 1000;
    while (now() < end) {
        alarm(30);                                  /* no write may take 30 s */
        for (size_t done = 0, n = 0; done < size; done += n)
            if (!SSL_write_ex(ssl, out + done, size - done, &n))
                return 1;
        sent += size;
    }
    alarm(30);
    char count[32] = "";
    size_t got = 0;
    SSL_stream_conclude(ssl, 0);
    SSL_read_ex(ssl, count, sizeof(count) - 1, &got);
    alarm(0);
    printf("ok %llu bytes written, %s read\n", sent, count);
    SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
    waitpid(child, NULL, 0);
    return 0;
}
