/* The TLS case names and their parts (tls_names.h). */
#include <string.h>

#include "tls_names.h"

enum { X25519 = 1, P256 = 2, P384 = 3 };    /* rows of SP_TLS_GROUPS, for the certificates' curves */
enum { AES_128_GCM = 1 };                   /* the row of SP_TLS_SUITES a handshake case uses */

/* The hybrid and pure ML-KEM groups: draft-kwiatkowski-tls-ecdhe-mlkem, draft-connolly-tls-mlkem-key-agreement. */
const sp_tls_group SP_TLS_GROUPS[SP_TLS_N_GROUPS] = {
    {"default", 0, 0},
    {"x25519", 0x001d, 0},
    {"p-256", 0x0017, 0},
    {"p-384", 0x0018, 0},
    {"x25519mlkem768", 0x11ec, 1},
    {"secp256r1mlkem768", 0x11eb, 1},
    {"mlkem768", 0x0201, 1},
};

const sp_tls_cert SP_TLS_CERTS[SP_TLS_N_CERTS] = {
    {"rsa-2048", 1, 0, -1}, {"rsa-3072", 1, 0, -1}, {"ecdsa-p256", 0, 0, P256}, {"ecdsa-p384", 0, 0, P384},
    {"ed25519", 0, 0, -1}, {"ml-dsa-44", 0, 44, -1}, {"ml-dsa-65", 0, 65, -1}, {"ml-dsa-87", 0, 87, -1},
};

const sp_tls_suite SP_TLS_SUITES[SP_TLS_N_SUITES] = {
    {"default", 0, 0, 0},
    {"aes-128-gcm", 0x1301, 0xc02b, 0xc02f},
    {"aes-256-gcm", 0x1302, 0xc02c, 0xc030},
    {"chacha20-poly1305", 0x1303, 0xcca9, 0xcca8},
};

const char *const SP_TLS_PROTOCOLS[SP_TLS_N_PROTOCOLS] = {"tls1.3", "tls1.2", "dtls1.3", "dtls1.2"};
const char *const SP_TLS_CONTEXTS[2] = {"shared", "new"};
const char *const SP_TLS_RESUMPTION[2] = {"ticket", "session-id"};

static prep_status parse_protocol(const char *proto, sp_tls_case *c, prep_result *res)
{
    int p = sp_find(proto, SP_ROWS(SP_TLS_PROTOCOLS));
    if (p < 0)
        return prep_unknown(res, "protocol must be tls1.2, tls1.3, dtls1.2 or dtls1.3, not \"%s\"", proto);
    c->tls13 = p == 0 || p == 2;
    c->dtls = p >= 2;
    c->proto = SP_TLS_PROTOCOLS[p];
    return PREP_OK;
}

prep_status sp_tls_parse(const case_name *name, sp_tls_case *c, prep_result *res)
{
    int resume = name->n >= 2 && strcmp(name->part[1], "resume") == 0;
    char list[200];
    memset(c, 0, sizeof(*c));
    if (name->n != 6 || !(resume || strcmp(name->part[1], "handshake") == 0))
        return prep_unknown(res, "tls cases are tls/handshake/PROTO/GROUP/CERT/shared|new, "
                                 "tls/resume/PROTO/ticket|session-id/GROUP/CERT or tls/transfer/PROTO/SUITE/SIZE");
    if (parse_protocol(name->part[2], c, res) != PREP_OK)
        return PREP_UNKNOWN;
    const char *group = name->part[resume ? 4 : 3], *cert = name->part[resume ? 5 : 4];
    c->group = sp_find(group, SP_ROWS(SP_TLS_GROUPS));
    c->cert = sp_find(cert, SP_ROWS(SP_TLS_CERTS));
    if (c->group < 0)
        return prep_unknown(res, "unknown group \"%s\" (%s)", group, sp_join(list, sizeof(list), ", ",
                                                                            SP_ROWS(SP_TLS_GROUPS)));
    if (c->cert < 0)
        return prep_unknown(res, "unknown certificate \"%s\" (%s)", cert, sp_join(list, sizeof(list), ", ",
                                                                                 SP_ROWS(SP_TLS_CERTS)));
    if (resume) {
        c->resume = sp_find(name->part[3], SP_ROWS(SP_TLS_RESUMPTION)) + 1;
        if (c->resume == SP_RESUME_NONE)
            return prep_unknown(res, "resumption is by ticket or session-id, not \"%s\"", name->part[3]);
        if (c->resume == SP_RESUME_SESSION_ID && c->tls13)
            return prep_na(res, "TLS 1.3 has no session-id resumption (it resumes with tickets)");
    } else if ((c->new_ctx = sp_find(name->part[5], SP_ROWS(SP_TLS_CONTEXTS))) < 0) {
        return prep_unknown(res, "the client context is shared or new, not \"%s\"", name->part[5]);
    }
    /* A pinned handshake pins its suite too; `default` leaves both sides' suites as their libraries have them. */
    c->suite = c->group == SP_TLS_DEFAULT ? SP_TLS_DEFAULT : AES_128_GCM;
    if (SP_TLS_GROUPS[c->group].tls13_only && !c->tls13)
        return prep_na(res, "%s is a TLS 1.3 group", SP_TLS_GROUPS[c->group].name);
    if (SP_TLS_CERTS[c->cert].mldsa && !c->tls13)
        return prep_na(res, "ML-DSA certificates sign TLS 1.3 handshakes only (TLS 1.2 has no ML-DSA scheme)");
    return PREP_OK;
}

prep_status sp_tls_parse_transfer(const char *proto, const char *suite, sp_tls_case *c, prep_result *res)
{
    char list[200];
    memset(c, 0, sizeof(*c));
    if (parse_protocol(proto, c, res) != PREP_OK)
        return PREP_UNKNOWN;
    c->suite = sp_find(suite, SP_ROWS(SP_TLS_SUITES));
    if (c->suite < 0)
        return prep_unknown(res, "unknown cipher suite \"%s\" (%s)", suite,
                            sp_join(list, sizeof(list), ", ", SP_ROWS(SP_TLS_SUITES)));
    c->group = X25519;
    c->cert = sp_find("ecdsa-p256", SP_ROWS(SP_TLS_CERTS));
    if (c->dtls)
        return prep_na(res, "bulk transfer is measured over TLS; DTLS has its handshake, resumption and memory cases");
    return PREP_OK;
}

uint16_t sp_tls_suite_id(const sp_tls_case *c)
{
    const sp_tls_suite *s = &SP_TLS_SUITES[c->suite];
    return c->tls13 ? s->id13 : SP_TLS_CERTS[c->cert].rsa ? s->id12_rsa : s->id12_ecdsa;
}
