/* The least a program can do to make QUIC requests with OpenSSL's QUIC
 * client, written against the OpenSSL API alone, for
 * bench/quic_overhead.py: one client SSL_CTX (OSSL_QUIC_client_method, the
 * CA file loaded, peer verified, TLS_AES_128_GCM_SHA256 and X25519 only), then
 * per request a new UDP socket and QUIC connection to 127.0.0.1:PORT, ALPN
 * "sslperf", the GET on the default stream, the response read to its end, a
 * rapid shutdown. Prints requests per second over MS.
 *
 *   minimal_quic_get PORT CAFILE MS */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/quic.h>
#include <openssl/ssl.h>

static const char GET[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sslperf\r\nConnection: close\r\n\r\n";
static const unsigned char ALPN[] = "\x07sslperf";

static int one_request(SSL_CTX *ctx, const struct sockaddr_in *addr, BIO_ADDR *peer)
{
    char buf[4096];
    size_t written = 0, got = 0, total = 0;
    int fd = socket(AF_INET, SOCK_DGRAM, 0), ok = 0;
    SSL *ssl = NULL;
    if (fd >= 0 && connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 && (ssl = SSL_new(ctx))
        && SSL_set_fd(ssl, fd) && SSL_set1_initial_peer_addr(ssl, peer) && SSL_set_tlsext_host_name(ssl, "localhost")
        && SSL_set1_host(ssl, "localhost") && SSL_set_alpn_protos(ssl, ALPN, sizeof(ALPN) - 1) == 0
        && SSL_connect(ssl) == 1 && SSL_write_ex2(ssl, GET, strlen(GET), SSL_WRITE_FLAG_CONCLUDE, &written)) {
        while (SSL_read_ex(ssl, buf, sizeof(buf), &got))
            total += got;
        ok = total > 0 && SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN;
    }
    if (ssl)
        SSL_shutdown_ex(ssl, SSL_SHUTDOWN_FLAG_RAPID, NULL, 0);
    SSL_free(ssl);
    if (fd >= 0)
        close(fd);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BIO_ADDR *peer = BIO_ADDR_new();
    SSL_CTX *ctx = SSL_CTX_new(OSSL_QUIC_client_method());
    if (!peer || !ctx || !BIO_ADDR_rawmake(peer, AF_INET, &addr.sin_addr, sizeof(addr.sin_addr), addr.sin_port)
        || !SSL_CTX_load_verify_locations(ctx, argv[2], NULL) || !SSL_CTX_set1_groups_list(ctx, "X25519")
        || !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256"))
        return 1;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    struct timespec t0, t1;
    double limit = atof(argv[3]) / 1000.0, elapsed = 0;
    long done = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (elapsed < limit) {
        if (!one_request(ctx, &addr, peer))
            return 1;
        done++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("%.1f\n", (double)done / elapsed);
    return 0;
}
