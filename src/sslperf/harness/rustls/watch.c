/* What a rustls client's connection negotiated, read from the bytes it sends and receives: rustls-ffi has no
 * message callback, and its getters say the version, suite and group but not whether the server asked for another
 * key share, nor the signature scheme, nor the bytes. Each record's header counts its bytes to the side that sent
 * it (core/wire.c); the server's handshake messages that travel in the clear (a ServerHello or HelloRetryRequest;
 * in TLS 1.2 also its Certificate and ServerKeyExchange, until its ChangeCipherSpec) are read whole by core/wire.c.
 * TLS 1.3 encrypts the rest, CertificateVerify included: a full handshake's signature scheme stays unknown. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>

#include "rustls_cases.h"

enum { CHANGE_CIPHER_SPEC = 20, HANDSHAKE = 22, RECORD_HEADER = 5, MESSAGE_HEADER = 4 };

void rtls_watch_start(rtls_watch *w, sp_negotiated *n)
{
    memset(w, 0, offsetof(rtls_watch, msg));
    w->n = n;
    sp_wire_start(n, 0);
}

/* Plaintext handshake bytes from the server, into whole messages for core/wire.c. */
static void server_messages(rtls_watch *w, const uint8_t *p, size_t len)
{
    while (len > 0) {
        size_t until = w->have < MESSAGE_HEADER ? MESSAGE_HEADER : w->want;
        size_t take = until - w->have < len ? until - w->have : len;
        if (w->have + take <= sizeof(w->msg))
            memcpy(w->msg + w->have, p, take);
        w->have += take, p += take, len -= take;
        if (w->have == MESSAGE_HEADER && !w->want)
            w->want = MESSAGE_HEADER + ((size_t)w->msg[1] << 16 | (size_t)w->msg[2] << 8 | w->msg[3]);
        if (w->want && w->have == w->want) {
            if (w->want <= sizeof(w->msg))
                sp_wire_message(w->n, 0, w->msg, w->want);
            w->have = w->want = 0;
        }
    }
}

/* A record header complete: its bytes counted; TLS 1.2's handshake records after the server's ChangeCipherSpec are
 * encrypted (TLS 1.3 sends ChangeCipherSpec only for middleboxes, and its encrypted records have another type). */
static void record_header(rtls_watch *w, int sent, const uint8_t *header)
{
    sp_wire_record(w->n, 0, sent, header, RECORD_HEADER);
    if (!sent && header[0] == CHANGE_CIPHER_SPEC && w->n->version != RUSTLS_TLS_VERSION_TLSV1_3)
        w->ciphered = 1;
}

void rtls_watch_bytes(rtls_watch *w, int sent, const uint8_t *p, size_t len)
{
    rtls_records *side = &w->side[sent != 0];
    while (len > 0) {
        if (side->have < RECORD_HEADER) {
            size_t take = RECORD_HEADER - side->have < len ? RECORD_HEADER - side->have : len;
            memcpy(side->header + side->have, p, take);
            side->have += take, p += take, len -= take;
            if (side->have == RECORD_HEADER) {
                record_header(w, sent, side->header);
                side->left = (size_t)side->header[3] << 8 | side->header[4];
            }
        } else {
            size_t take = side->left < len ? side->left : len;
            if (!sent && side->header[0] == HANDSHAKE && !w->ciphered)
                server_messages(w, p, take);
            side->left -= take, p += take, len -= take;
        }
        if (side->have == RECORD_HEADER && side->left == 0)
            side->have = 0;          /* the next record */
    }
}

void rtls_watch_end(rtls_watch *w, const struct rustls_connection *client)
{
    sp_negotiated *n = w->n;
    enum rustls_handshake_kind kind = rustls_connection_handshake_kind(client);
    if (n->hello_retry == SP_UNKNOWN && kind != RUSTLS_HANDSHAKE_KIND_RESUMED)   /* a resumption does not say */
        n->hello_retry = kind == RUSTLS_HANDSHAKE_KIND_FULL_WITH_HELLO_RETRY_REQUEST;
    if (n->version == RUSTLS_TLS_VERSION_TLSV1_3 && kind != RUSTLS_HANDSHAKE_KIND_RESUMED)
        n->signature = SP_UNKNOWN;   /* encrypted (core/wire.c's ServerHello said none yet); a resumption has none */
    uint16_t group = rustls_connection_get_negotiated_key_exchange_group(client);
    sp_wire_fallback(n, rustls_connection_get_protocol_version(client), group ? group : SP_UNKNOWN,
                     rustls_connection_get_negotiated_ciphersuite(client), SP_UNKNOWN);
}
