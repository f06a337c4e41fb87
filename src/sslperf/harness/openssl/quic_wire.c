/* What a QUIC client connection negotiated (OpenSSL 3.5+), recorded through its message callback (quic_loopback.h):
 * the TLS handshake's messages, read as over TCP (core/wire.c; the record headers OpenSSL's QUIC TLS reports are
 * made up, QUIC has none), and for the bytes each side sent, the QUIC packets that carry the handshake: Initial and
 * Handshake packets whole (header, CRYPTO and ACK frames, padding: a client's first Initial is 1200 bytes), and a
 * server's Retry (the address validation OpenSSL's listener does by default). Not the UDP and IP headers, as TLS's
 * counts leave out TCP's; not the 1-RTT packets (a server's tickets and HANDSHAKE_DONE, the request, data). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "compat.h"
#include "quic_loopback.h"
#include "tls_names.h"

#if SP_OSSL_QUIC

enum { INITIAL = 0, HANDSHAKE = 2 };     /* RFC 9000 §17.2: a long header's packet types (Retry: 3) */

/* A variable-length integer (RFC 9000 §16) at *p, moved past; 0 with *ok cleared when it does not fit. */
static uint64_t varint(const unsigned char **p, const unsigned char *end, int *ok)
{
    size_t len = *p < end ? (size_t)1 << (**p >> 6) : 0;
    uint64_t v = 0;
    if (!len || (size_t)(end - *p) < len) {
        *ok = 0;
        return 0;
    }
    for (size_t i = 0; i < len; i++)
        v = v << 8 | (i ? (*p)[i] : (**p & 0x3f));
    *p += len;
    return v;
}

/* Whether a long header's version (bytes 1 to 4) is a version's, not a Version Negotiation's 0. */
static int long_header(const unsigned char *b, size_t len)
{
    return len >= 7 && (b[0] & 0x80) && (b[1] | b[2] | b[3] | b[4]) != 0;
}

/* The bytes of an Initial or Handshake packet whose header (through its Length field) is `hdr`; 0 for another. */
static int64_t handshake_packet(const unsigned char *hdr, size_t len)
{
    int type = hdr && len ? (hdr[0] >> 4) & 3 : -1, ok = 1;
    if (!long_header(hdr, len) || (type != INITIAL && type != HANDSHAKE))
        return 0;
    const unsigned char *p = hdr + 5, *end = hdr + len;
    for (int id = 0; id < 2 && ok; id++) {             /* the destination's and the source's connection ids */
        ok = p < end && (size_t)(end - p) > *p;
        p += ok ? 1 + *p : 0;
    }
    if (ok && type == INITIAL) {
        uint64_t token = varint(&p, end, &ok);
        ok = ok && token <= (uint64_t)(end - p);
        p += ok ? token : 0;
    }
    uint64_t rest = ok ? varint(&p, end, &ok) : 0;   /* Length: the packet number and the protected payload */
    return ok ? (int64_t)(p - hdr) + (int64_t)rest : 0;
}

/* A Retry packet fills its datagram (RFC 9000 §17.2.5): its bytes, or 0 for any other datagram. */
static int64_t retry_datagram(const unsigned char *d, size_t len)
{
    return long_header(d, len) && (d[0] & 0x30) == 0x30 ? (int64_t)len : 0;
}

static void on_quic_message(int sent, int version, int content_type, const void *buf, size_t len, SSL *ssl,
                            void *arg)
{
    (void)version, (void)ssl;
    sp_negotiated *n = arg;
    int64_t bytes = 0;
    if (content_type == SSL3_RT_HANDSHAKE && !sent)
        sp_wire_message(n, 0, buf, len);
    else if (content_type == SSL3_RT_QUIC_PACKET)
        bytes = handshake_packet(buf, len);
    else if (content_type == SSL3_RT_QUIC_DATAGRAM)
        bytes = retry_datagram(buf, len);
    if (bytes) {
        int64_t *side = sent ? &n->client_bytes : &n->server_bytes;
        *side = (*side < 0 ? 0 : *side) + bytes;
    }
}

void quic_watch(SSL *conn, sp_negotiated *n)
{
    sp_wire_start(n, 0);
    SSL_set_msg_callback(conn, on_quic_message);
    SSL_set_msg_callback_arg(conn, n);
}

void quic_watched(SSL *conn, sp_negotiated *n)
{
    if (n->version == SP_UNKNOWN)
        n->version = TLS1_3_VERSION;        /* QUIC v1 carries TLS 1.3 (RFC 9001); SSL_version says QUIC's own */
    tls_watched(conn, n);                  /* the callback off, and the library's answers where the wire was mute */
}

#endif
