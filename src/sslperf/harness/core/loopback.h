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
 * accepted connection (TCP_NODELAY set) to `serve`, which answers one GET, from `workers` threads accepting on the
 * one socket (`serve` must then be safe to run in several threads); stops after `max_connections`, or after 30 s
 * without one, and prints sp_served_line. 0, or 1 when it cannot listen. */
int sp_https_serve_workers(int max_connections, int workers, const char *ca_file, void (*serve)(void *ctx, int fd),
                           void *ctx);
/* The server's last line, {"type":"served",...}: the connections it served and the CPU time its process spent
 * from listening to the end (the CPU each connection costs the server). */
void sp_served_line(int connections, uint64_t cpu_ns);
/* A server's or client's concurrency argument (workers, client threads): 1 to SP_MAX_WORKERS, else 0 and an error
 * line printed. */
int sp_concurrency(const char *arg);
/* One GET to 127.0.0.1:PORT by the backend: 1 and its connect, pretransfer and total times, or 0 with `why`.
 * When `checked` is not NULL (the first request), the handshake's negotiation is checked and described there, and
 * what the connection negotiated is recorded in `negotiated` (where the backend can). */
typedef int (*sp_one_get)(void *ctx, int port, uint64_t times[3], char *why, size_t why_len, char *checked,
                          size_t checked_len, sp_negotiated *negotiated);
/* The handshake case a loopback command's arguments name (tls/handshake/PROTO/GROUP/CERT/CTX), split; 0 when
 * it does not fit. */
int sp_handshake_name(case_name *name, const char *proto, const char *group, const char *cert, const char *ctx);
/* A client's request count argument: 1 to SP_MAX_REQUESTS, else 0 and an error line printed. */
int sp_request_count(const char *arg);
/* The client: `count` GETs one after another from each of `threads` client threads at once (`get` must then be
 * safe to run in several threads), then one {"type":"requests",...} line with each request's times, the whole
 * loop's wall time (loop_ns), the process's CPU time in it (cpu_ns) and "threads"; the first thread's first
 * request is checked ("checked") and what it negotiated recorded ("negotiated", main.c's keys). 0 when all
 * succeeded. */
int sp_https_get_clients(int port, int count, int threads, sp_one_get get, void *ctx);
/* ---- HTTPS over TCP (https.c): the commands, with a backend's TLS on a connected socket ---- */

/* One connection: the backend's TLS object and its socket. */
typedef struct {
    void *tls;
    int fd;
    /* A client's checked connection: where the backend records what it negotiated, from the handshake (connect)
     * to close (so a TLS 1.3 server's tickets, read with the response, count to its bytes); NULL: not recorded.
     * A backend that cannot record leaves it untouched (then no "negotiated" in the reply). */
    sp_negotiated *negotiated;
} sp_tls_socket;

/* What a backend gives the HTTPS commands (its loopback.c defines SP_HTTPS): its configuration of a handshake
 * case (whose name the core has checked), a server and a client context made from it, and one connection's TLS
 * on a connected socket. What is made fails with why in `res`. */
typedef struct {
    int concurrent;         /* server workers and client threads may share its server and client contexts */
    size_t config_size;     /* its configuration of a case, zeroed by the core */
    prep_status (*parse)(const case_name *name, void *config, prep_result *res);
    /* The server's contexts and certificate; `ca_file` gets the file a client must trust (removed after). */
    void *(*server_new)(void *config, char *ca_file, size_t ca_file_len, prep_result *res);
    void (*server_free)(void *server);
    int (*accept)(void *server, sp_tls_socket *conn);                  /* the server's handshake; 0 on failure */
    /* A client context trusting `ca_file`: one every request shares (shared), or each request's own (new). */
    void *(*client_context)(const void *config, const char *ca_file, prep_result *res);
    void (*context_free)(void *context);
    int (*connect)(void *context, sp_tls_socket *conn, char *why, size_t why_len);   /* the client's handshake */
    /* What a client's handshake negotiated against what was asked: `problem` "" and `checked` filled, or not. */
    void (*check)(const void *config, sp_tls_socket *conn, char *problem, size_t problem_len, char *checked,
                  size_t checked_len);
    /* Plaintext out (it may wait in the library until the next recv or close); 0 on failure. */
    int (*send)(sp_tls_socket *conn, const char *buf, size_t len);
    int (*recv)(sp_tls_socket *conn, char *buf, size_t len);     /* plaintext in: bytes, 0 at the end or failure */
    void (*close)(sp_tls_socket *conn, int server);    /* close_notify where the side sends one; freed */
} sp_https_backend;
extern const sp_https_backend SP_HTTPS;
/* https-server DIR PROTO GROUP CERT MAX_CONNECTIONS [WORKERS]: serves GETs until MAX_CONNECTIONS were served. */
int sp_https_server_mode(int argc, char **argv);
/* https-get PORT CA_FILE PROTO GROUP CERT new|shared COUNT [THREADS]: COUNT GETs (from each of THREADS threads). */
int sp_https_get_mode(int argc, char **argv);

/* An emulated path for UDP: `harness udp-relay` (relay.c). */
int udp_relay(int argc, char **argv);
/* A connected TCP socket to 127.0.0.1:PORT with TCP_NODELAY, or -1. */
int sp_connect_loopback(int port);

#endif
