/* The smallest honest TLS 1.3 handshake loop over the same API, for
 * bench/handshake_overhead.py: X25519, ECDSA P-256 server certificate,
 * client verifying against a CA file, tickets taken, both ends closed.
 * usage: minimal_handshake CERT KEY CA_FILE MILLISECONDS */
#define _POSIX_C_SOURCE 200809L
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void configure(SSL_CTX *ctx)
{
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set1_groups_list(ctx, "X25519");
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256");
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    SSL_CTX *server = SSL_CTX_new(TLS_server_method()), *client = SSL_CTX_new(TLS_client_method());
    configure(server);
    configure(client);
    if (!SSL_CTX_use_certificate_file(server, argv[1], SSL_FILETYPE_PEM)
        || !SSL_CTX_use_PrivateKey_file(server, argv[2], SSL_FILETYPE_PEM)
        || !SSL_CTX_load_verify_locations(client, argv[3], NULL))
        return 1;
    SSL_CTX_set_verify(client, SSL_VERIFY_PEER, NULL);
    double end = now() + atoi(argv[4]) / 1000.0, start = now();
    long count = 0;
    while (now() < end) {
        SSL *c = SSL_new(client), *s = SSL_new(server);
        BIO *cb, *sb;
        BIO_new_bio_pair(&cb, 0, &sb, 0);
        SSL_set_bio(c, cb, cb);
        SSL_set_bio(s, sb, sb);
        SSL_set_connect_state(c);
        SSL_set_accept_state(s);
        SSL_set_tlsext_host_name(c, "localhost");
        int cd = 0, sd = 0;
        while (!(cd && sd)) {
            if (!cd)
                cd = SSL_do_handshake(c) == 1;
            if (!sd)
                sd = SSL_do_handshake(s) == 1;
        }
        unsigned char byte;
        SSL_read(c, &byte, 1);
        SSL_set_shutdown(c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_set_shutdown(s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_free(c);
        SSL_free(s);
        count++;
    }
    printf("%.1f\n", count / (now() - start));
    return 0;
}
