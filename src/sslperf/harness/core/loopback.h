/* What every backend's HTTPS over loopback shares (loopback.c here): the listening socket, the server's accept
 * loop, the client's request loop and their JSON lines. The backends do one connection's TLS. */
#ifndef SSLPERF_LOOPBACK_H
#define SSLPERF_LOOPBACK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define SP_HTTP_RESPONSE \
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nhello, world\n"
#define SP_HTTP_GET "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sslperf\r\nConnection: close\r\n\r\n"
#define SP_MAX_REQUESTS 100000
#define SP_MAX_WORKERS 256          /* server workers, client threads */

/* A TCP socket listening on 127.0.0.1 at a port the kernel chose (in `addr`), or -1. */
int listen_loopback(struct sockaddr_in *addr, int backlog);
/* {"type":"error","reason":"WHAT: DETAIL"} on stdout. */
void sp_loopback_fail(const char *what, const char *detail);
/* {"type":"na","reason":"WHAT: DETAIL"}: the library cannot do what was asked (a group it lacks). */
void sp_loopback_na(const char *what, const char *detail);
/* The server: prints {"type":"listening",...} with the port and the CA file a client must trust, then gives each
 * accepted connection (TCP_NODELAY set) to `serve`, which answers one GET; stops after `max_connections`, or
 * after 30 s without one, and prints sp_served_line. 0, or 1 when it cannot listen. */
int sp_https_serve(int max_connections, const char *ca_file, void (*serve)(void *ctx, int fd), void *ctx);
/* The same with `workers` threads accepting on the one socket, so that many connections are served at once
 * (`serve` must then be safe to run in several threads). */
int sp_https_serve_workers(int max_connections, int workers, const char *ca_file, void (*serve)(void *ctx, int fd),
                           void *ctx);
/* The server's last line, {"type":"served",...}: the connections it served and the CPU time its process spent
 * from listening to the end (the CPU each connection costs the server). */
void sp_served_line(int connections, uint64_t cpu_ns);
/* A server's or client's concurrency argument (workers, client threads): 1 to SP_MAX_WORKERS, else 0 and an error
 * line printed. */
int sp_concurrency(const char *arg);
/* One GET to 127.0.0.1:PORT by the backend: 1 and its connect, pretransfer and total times, or 0 with `why`.
 * When `checked` is not NULL (the first request), the handshake's negotiation is checked and described there. */
typedef int (*sp_one_get)(void *ctx, int port, uint64_t times[3], char *why, size_t why_len, char *checked,
                          size_t checked_len);
/* The handshake case a loopback command's arguments name (tls/handshake/PROTO/GROUP/CERT/CTX), split; 0 when
 * it does not fit. */
int sp_handshake_name(case_name *name, const char *proto, const char *group, const char *cert, const char *ctx);
/* A client's request count argument: 1 to SP_MAX_REQUESTS, else 0 and an error line printed. */
int sp_request_count(const char *arg);
/* The client: `count` GETs one after another, then one {"type":"requests",...} line with each request's times,
 * the whole loop's (loop_ns) and the process's CPU time in it (cpu_ns); 0 when all succeeded. */
int sp_https_get_loop(int port, int count, sp_one_get get, void *ctx);
/* The same from `threads` client threads at once, `count` GETs each (`get` must then be safe to run in several
 * threads): every request's times, the whole wall time (loop_ns) and "threads"; the first thread's first request
 * is checked. */
int sp_https_get_clients(int port, int count, int threads, sp_one_get get, void *ctx);
/* An emulated path for UDP: `harness udp-relay` (relay.c). */
int udp_relay(int argc, char **argv);
/* A connected TCP socket to 127.0.0.1:PORT with TCP_NODELAY, or -1. */
int sp_connect_loopback(int port);

#endif
