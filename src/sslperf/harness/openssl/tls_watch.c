/* A client's record of its negotiation past the handshake, and the comparison of two connections' (tls_watch.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "compat.h"
#include "tls.h"
#include "tls_names.h"
#include "tls_watch.h"

/* The message callback after the handshake (`arg`: the tls_after): a record's header is held until a handshake
 * message comes out of its body (then it counts) or the next record's header replaces it. What the client sends
 * (its request, data, close_notify) never counts. */
static void after_handshake(int sent, int version, int content_type, const void *buf, size_t len, SSL *ssl,
                            void *arg)
{
    (void)version;
    tls_after *a = arg;
    if (sent)
        return;
    if (content_type == SSL3_RT_HEADER && len <= sizeof(a->header)) {
        memcpy(a->header, buf, len);
        a->header_len = len;
    } else if (content_type == SSL3_RT_HANDSHAKE && a->header_len) {
        sp_wire_record(a->n, SSL_is_dtls(ssl), 0, a->header, a->header_len);
        a->header_len = 0;
    }
}

void tls_watch_after(SSL *client, tls_after *after, sp_negotiated *n)
{
    after->n = n;
    after->header_len = 0;
    SSL_set_msg_callback(client, after_handshake);
    SSL_set_msg_callback_arg(client, after);
}

void tls_same_negotiation(SSL *client, const sp_negotiated *n, char *problem, size_t problem_len)
{
    sp_negotiated own;
    sp_wire_start(&own, SSL_is_dtls(client));
    tls_watched(client, &own);       /* the library's own answers alone: version, suite, group where it says */
    const struct {
        const char *what;
        int32_t measured, recorded;
    } fields[] = {{"version", own.version, n->version}, {"cipher suite", own.suite, n->suite},
                  {"group", own.group, n->group}};
    problem[0] = '\0';
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && !problem[0]; i++)
        if (fields[i].measured != SP_UNKNOWN && fields[i].recorded != SP_UNKNOWN
            && fields[i].measured != fields[i].recorded)
            snprintf(problem, problem_len, "the connection measured negotiated another %s (0x%04x) than the one "
                     "recorded (0x%04x)", fields[i].what, (unsigned)fields[i].measured, (unsigned)fields[i].recorded);
}
