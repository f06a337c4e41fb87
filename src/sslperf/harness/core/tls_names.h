/* The TLS case names every backend measures under, and their parts:
 *
 *   tls/handshake/PROTO/GROUP/CERT/shared|new    shared: one client context; new: one per connection
 *   tls/resume/PROTO/ticket|session-id/GROUP/CERT
 *   tls/transfer/PROTO/SUITE/SIZE                over X25519 and an ECDSA P-256 certificate
 *
 * PROTO tls1.2, tls1.3, dtls1.2 or dtls1.3. GROUP `default` and SUITE `default` set nothing: each side keeps its
 * library's own groups, suites and signature algorithms (what a user who upgrades gets), and the connection
 * records what was negotiated instead of checking it.
 *
 * A backend keeps its library's constants for a part in a table of the same
 * rows in the same order (the SP_TLS_N_* counts, checked by SP_TLS_SAME_ROWS),
 * and reads a case through sp_tls_parse, so every backend knows the same
 * names, answers an unknown one with the same message, and a new group or
 * certificate is a row here and a row in each backend. */
#ifndef SSLPERF_TLS_NAMES_H
#define SSLPERF_TLS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define SP_TLS_N_GROUPS 7
#define SP_TLS_N_CERTS 8
#define SP_TLS_N_SUITES 4
#define SP_TLS_N_PROTOCOLS 4
#define SP_TLS_DEFAULT 0           /* the `default` row of SP_TLS_GROUPS and SP_TLS_SUITES: nothing set */
/* A backend table of one entry per row of the part (`part`: GROUPS, CERTS or SUITES). */
#define SP_TLS_SAME_ROWS(table, part) \
    _Static_assert(sizeof(table) / sizeof((table)[0]) == SP_TLS_N_##part, #table " has a row per TLS " #part " row")

typedef struct {
    const char *name;          /* as in the case id: default, x25519, p-256, p-384, x25519mlkem768 … */
    uint16_t codepoint;        /* IANA TLS Supported Groups: what a handshake negotiates (0: default, anything) */
    int tls13_only;
} sp_tls_group;

typedef struct {
    const char *name;          /* rsa-2048, rsa-3072, ecdsa-p256, ecdsa-p384, ed25519, ml-dsa-44/65/87 */
    int rsa;
    int mldsa;                 /* ML-DSA's parameter set (44, 65, 87), else 0: TLS 1.3 only (draft-ietf-tls-mldsa) */
    int curve_group;           /* an ECDSA key's curve as a group row (TLS 1.2 must offer it too), else -1 */
} sp_tls_cert;

typedef struct {
    const char *name;          /* the AEAD: default, aes-128-gcm, aes-256-gcm, chacha20-poly1305 */
    uint16_t id13, id12_ecdsa, id12_rsa;   /* the suite codepoints: TLS 1.3; TLS 1.2 with each key type */
} sp_tls_suite;

extern const sp_tls_group SP_TLS_GROUPS[SP_TLS_N_GROUPS];
extern const sp_tls_cert SP_TLS_CERTS[SP_TLS_N_CERTS];
extern const sp_tls_suite SP_TLS_SUITES[SP_TLS_N_SUITES];
extern const char *const SP_TLS_PROTOCOLS[SP_TLS_N_PROTOCOLS];    /* tls1.3, tls1.2, dtls1.3, dtls1.2 */
extern const char *const SP_TLS_CONTEXTS[2];       /* shared, new */
extern const char *const SP_TLS_RESUMPTION[2];     /* ticket, session-id */

enum { SP_RESUME_NONE, SP_RESUME_TICKET, SP_RESUME_SESSION_ID };

typedef struct {
    int tls13;                 /* (D)TLS 1.3, else 1.2 */
    int dtls;                  /* DTLS (datagrams), else TLS */
    const char *proto;         /* tls1.3 | tls1.2 | dtls1.3 | dtls1.2, as in the case id */
    int group, cert, suite;    /* rows (a handshake's suite is AES-128-GCM's) */
    int new_ctx;               /* a new client context (CA file loaded) per connection */
    int resume;                /* SP_RESUME_* */
} sp_tls_case;

/* A handshake or resumption case; n/a where the protocol cannot have it (a TLS 1.3 group in TLS 1.2, TLS 1.3
 * resumption by session id). */
prep_status sp_tls_parse(const case_name *name, sp_tls_case *c, prep_result *res);
/* A transfer's connection: PROTO and SUITE as named, X25519 and an ECDSA P-256 certificate. */
prep_status sp_tls_parse_transfer(const char *proto, const char *suite, sp_tls_case *c, prep_result *res);
/* The suite's codepoint for this case's protocol and certificate (0 for `default`: any). */
uint16_t sp_tls_suite_id(const sp_tls_case *c);


/* ---- what a connection negotiated, read from its handshake (wire.c) ---- */

/* Before a connection: everything unknown, no bytes counted (a DTLS connection's messages have DTLS headers). */
void sp_wire_start(sp_negotiated *n, int dtls);
/* A whole handshake message the client received (its header included, decrypted: what a message callback sees). */
void sp_wire_message(sp_negotiated *n, int dtls, const unsigned char *msg, size_t len);
/* A record's header the client wrote (`sent`) or received: its bytes are counted to that side. */
void sp_wire_record(sp_negotiated *n, int dtls, int sent, const unsigned char *header, size_t len);
/* Fill from the library's own answers what the messages did not say (a backend without a message callback). */
void sp_wire_fallback(sp_negotiated *n, int32_t version, int32_t group, int32_t suite, int32_t signature);

#endif
