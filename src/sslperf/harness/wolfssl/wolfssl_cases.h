/* The wolfSSL backend's families, as backend.c registers them. */
#ifndef SSLPERF_WOLFSSL_CASES_H
#define SSLPERF_WOLFSSL_CASES_H

#include "harness.h"

prep_status prepare_wolf_cipher(const case_name *name, bench_case *out, prep_result *res);   /* crypto.c */
prep_status prepare_wolf_digest(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_wolf_mac(const case_name *name, bench_case *out, prep_result *res);
prep_status prepare_wolf_pkey(const case_name *name, bench_case *out, prep_result *res);     /* pkey.c */
prep_status prepare_wolf_tls(const case_name *name, bench_case *out, prep_result *res);      /* tls.c */

#endif
