/* The smallest honest bulk-transfer loop over the same API, for
 * bench/transfer_overhead.py: one TLS 1.3 handshake (X25519, ECDSA P-256)
 * over a BIO pair (the client verifies against CAFILE for "localhost"), then
 * SSL_write of SIZE bytes and SSL_read until they are in, again and again;
 * prints bytes per second.
 * usage: minimal_transfer CERT KEY CAFILE SUITE SIZE MILLISECONDS */
#define _POSIX_C_SOURCE 200809L
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    size_t size = strtoul(argv[5], NULL, 10);
    SSL_CTX *server = SSL_CTX_new(TLS_server_method()), *client = SSL_CTX_new(TLS_client_method());
    SSL_CTX *both[] = {server, client};
    for (int i = 0; i < 2; i++) {
        SSL_CTX_set_min_proto_version(both[i], TLS1_3_VERSION);
        SSL_CTX_set1_groups_list(both[i], "X25519");
        SSL_CTX_set_ciphersuites(both[i], argv[4]);
    }
    if (!SSL_CTX_use_certificate_file(server, argv[1], SSL_FILETYPE_PEM)
        || !SSL_CTX_use_PrivateKey_file(server, argv[2], SSL_FILETYPE_PEM)
        || !SSL_CTX_load_verify_locations(client, argv[3], NULL))
        return 1;
    SSL_CTX_set_verify(client, SSL_VERIFY_PEER, NULL);
    SSL *c = SSL_new(client), *s = SSL_new(server);
    BIO *cb, *sb;
    BIO_new_bio_pair(&cb, size + size / 8 + 65536, &sb, size + size / 8 + 65536);
    SSL_set_bio(c, cb, cb);
    SSL_set_bio(s, sb, sb);
    SSL_set_connect_state(c);
    SSL_set_tlsext_host_name(c, "localhost");
    SSL_set_accept_state(s);
    int cd = 0, sd = 0;
    for (int round = 0; round < 64 && !(cd && sd); round++) {
        if (!cd)
            cd = SSL_do_handshake(c) == 1;
        if (!sd)
            sd = SSL_do_handshake(s) == 1;
    }
    if (!cd || !sd)
        return 1;
    unsigned char byte, *out = malloc(size), *in = malloc(size);
    memset(out, 'x', size);
    SSL_read(c, &byte, 1);                  /* the session tickets */
    double end = now() + atoi(argv[6]) / 1000.0, start = now();
    long count = 0;
    while (now() < end) {
        for (int i = 0; i < 16; i++, count++) {        /* the clock read once per 16 writes, as the harness */
            if (SSL_write(c, out, (int)size) != (int)size)
                return 1;
            for (size_t got = 0; got < size;) {
                int n = SSL_read(s, in, (int)(size - got));
                if (n <= 0)
                    return 1;
                got += (size_t)n;
            }
        }
    }
    printf("%.1f\n", count * (double)size / (now() - start));
    return 0;
}
