/* Memory per connection (memory.c): N client/server pairs taken through the handshake in lockstep, then the bytes
 * the library holds per established connection, client and server apart, and the peak during the handshakes.
 *
 *   harness memory tls/handshake/PROTO/GROUP/CERT/shared N     (the backend's SP_MEMORY)
 *
 * The driver is the same for every library and protocol; a backend says how to make, step and free a connection
 * (sp_lockstep), and counts bytes through its library's allocator hooks where it has them (sp_counted_*), else the
 * driver reads glibc's statistics. */
#ifndef SSLPERF_MEMORY_H
#define SSLPERF_MEMORY_H

#include <stddef.h>

#include "harness.h"

/* One way of taking N connections through their handshakes: each round every client takes one step, then
 * every server; a callback that can fail returns 0 and may say why in `why` ("a handshake failed" otherwise). */
typedef struct {
    int max_rounds;             /* rounds before the handshakes count as failed; 0: until deadline_s */
    unsigned deadline_s;        /* 0: none */
    /* What outlives the connections (transports, a listener), made before the baseline so it is not counted. */
    int (*transports)(void *state, long n, char *why, size_t why_len);
    int (*make)(void *state, long i, char *why, size_t why_len);        /* connection i's client and server */
    /* One handshake step of connection i's client or server: 1 while it goes on (*done set once finished). */
    int (*step)(void *state, long i, int server, int *done, char *why, size_t why_len);
    void (*between)(void *state);   /* optional: after the clients' steps of a round (a listener takes them in) */
    void (*wait)(void *state);      /* optional: after a round that left some unfinished (for the network) */
    /* Optional: once all are established, before their bytes are counted (the clients take their session
     * tickets; what was negotiated is checked, and described in `checked` for the reply). */
    int (*settle)(void *state, long n, char *checked, size_t checked_len, char *why, size_t why_len);
    /* Optional: what the first connection negotiated (recorded as it went), into `n`; nothing is allocated. */
    void (*negotiated)(void *state, sp_negotiated *n);
    void (*free_end)(void *state, long i, int server);
} sp_lockstep;

/* The lockstep over `n` connections, then {"type":"memory",...} (or an error line); the exit code. The server
 * side is what freeing the servers gives back, the client side what freeing the clients then gives back. */
int sp_memory_measure(const sp_lockstep *lockstep, void *state, const char *case_id, long n);

/* A backend's `memory` command: the case parsed into its state (NULL: refused, why in `res`), the case's shared
 * contexts made, the state freed; and the lockstep its connections take. */
typedef struct {
    const char *contexts;       /* what its shared contexts are called, for the refusal of another case */
    void *(*open)(const case_name *name, prep_result *res);
    prep_status (*make_contexts)(void *state, prep_result *res);
    void (*close)(void *state);
    sp_lockstep lockstep;
} sp_memory_backend;
extern const sp_memory_backend SP_MEMORY;    /* each backend's memory.c */
int sp_memory_mode(int argc, char **argv);    /* `memory CASE N` */

/* A backend with allocator hooks counts the library's bytes through these (they keep a size before each block)
 * and says so once they are in (`method`, as the reply names it); before anything is allocated. */
void *sp_counted_malloc(size_t n);
void *sp_counted_realloc(void *p, size_t n);
void sp_counted_free(void *p);
void sp_memory_hooked(const char *method);

#endif
