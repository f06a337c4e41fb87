/* HTTPS over loopback, the part no library's API is in: sockets, the accept loop, the request loop and their
 * replies (see loopback.h; each backend's loopback.c does one connection's TLS). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "harness.h"
#include "loopback.h"

int listen_loopback(struct sockaddr_in *addr, int backlog)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    socklen_t len = sizeof(*addr);
    memset(addr, 0, sizeof(*addr));
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);        /* loopback only; port 0: the kernel picks one */
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) != 0 || listen(fd, backlog) != 0
        || getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void refusal(const char *type, const char *what, const char *detail)
{
    char reason[REASON_MAX + 100];
    snprintf(reason, sizeof(reason), "%s%s%s", what, detail && *detail ? ": " : "", detail ? detail : "");
    printf("{\"type\":\"%s\",\"reason\":", type);
    json_string(reason);
    printf("}\n");
    fflush(stdout);
}

void sp_loopback_fail(const char *what, const char *detail)
{
    refusal("error", what, detail);
}

void sp_loopback_na(const char *what, const char *detail)
{
    refusal("na", what, detail);
}

int sp_handshake_name(case_name *name, const char *proto, const char *group, const char *cert, const char *ctx)
{
    char id[CASE_ID_MAX];
    int n = snprintf(id, sizeof(id), "tls/handshake/%s/%s/%s/%s", proto, group, cert, ctx);
    return n > 0 && (size_t)n < sizeof(id) && sp_split_name(id, name);
}

int sp_request_count(const char *arg)
{
    int count = atoi(arg);
    if (count >= 1 && count <= SP_MAX_REQUESTS)
        return count;
    sp_loopback_fail("request count out of range", arg);
    return 0;
}

/* The accept loop every server worker runs on the one listening socket (non-blocking, so a worker that loses the
 * race for a connection goes back to waiting). */
struct accept_loop {
    int fd, max_connections;
    atomic_int served;
    void (*serve)(void *ctx, int fd);
    void *ctx;
};

static void *accept_worker(void *p)
{
    struct accept_loop *a = p;
    int one = 1;
    while (atomic_load(&a->served) < a->max_connections) {
        struct pollfd pfd = {.fd = a->fd, .events = POLLIN};
        if (poll(&pfd, 1, 30000) <= 0)
            break;                                         /* idle: stop by ourselves */
        int conn = accept(a->fd, NULL, NULL);
        if (conn < 0)
            continue;                                      /* another worker took it */
        int taken = atomic_fetch_add(&a->served, 1);
        if (taken >= a->max_connections) {
            close(conn);
            break;
        }
        if (taken + 1 == a->max_connections)
            shutdown(a->fd, SHUT_RDWR);      /* the last one: wake the workers still waiting in poll() */
        setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        a->serve(a->ctx, conn);
        close(conn);
    }
    return NULL;
}

int sp_https_serve_workers(int max_connections, int workers, const char *ca_file, void (*serve)(void *ctx, int fd),
                           void *ctx)
{
    signal(SIGPIPE, SIG_IGN);         /* a client gone before our close_notify (its check failed) is no crash */
    struct sockaddr_in addr;
    int fd = listen_loopback(&addr, 256);
    if (fd < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        sp_loopback_fail("cannot listen on 127.0.0.1", NULL);
        return 1;
    }
    printf("{\"type\":\"listening\",\"port\":%d,\"workers\":%d,\"ca_file\":", ntohs(addr.sin_port), workers);
    json_string(ca_file);
    printf(",\"library\":");
    json_string(sp_library_version());
    printf("}\n");
    fflush(stdout);
    uint64_t cpu0 = sp_now_ns(SP_PROCESS_CPU);
    struct accept_loop loop = {.fd = fd, .max_connections = max_connections, .serve = serve, .ctx = ctx};
    pthread_t extra[SP_MAX_WORKERS];
    int started = 0;
    for (; started < workers - 1 && started < SP_MAX_WORKERS; started++)
        if (pthread_create(&extra[started], NULL, accept_worker, &loop) != 0)
            break;
    accept_worker(&loop);
    for (int i = 0; i < started; i++)
        pthread_join(extra[i], NULL);
    close(fd);
    int served = atomic_load(&loop.served);
    sp_served_line(served < max_connections ? served : max_connections, sp_now_ns(SP_PROCESS_CPU) - cpu0);
    return 0;
}

void sp_served_line(int connections, uint64_t cpu_ns)
{
    printf("{\"type\":\"served\",\"connections\":%d,\"cpu_ns\":%llu}\n", connections, (unsigned long long)cpu_ns);
    fflush(stdout);
}

int sp_concurrency(const char *arg)
{
    int n = atoi(arg);
    if (n >= 1 && n <= SP_MAX_WORKERS)
        return n;
    sp_loopback_fail("concurrency out of range (1 to 256)", arg);
    return 0;
}

int sp_connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void json_u64_field(const char *key, const uint64_t *v, int n)
{
    printf(",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        printf(i ? ",%llu" : "%llu", (unsigned long long)v[i]);
    printf("]");
}

/* One client thread's share of the requests: its slice of the times, how far it got and why it stopped. */
struct get_thread {
    int port, count, done;
    sp_one_get get;
    void *ctx;
    uint64_t *connect_ns, *tls_ns, *total_ns;
    char *checked;                 /* the first thread's: its first request is checked */
    size_t checked_len;
    sp_negotiated *negotiated;     /* the first thread's: what its first request negotiated */
    char why[300];
    uint64_t wait_ns;              /* its run-queue wait over its requests: another task held its CPU */
    int scheduled;                 /* the kernel said (sp_sched_now) */
};

static void *get_thread_main(void *p)
{
    struct get_thread *t = p;
    sp_sched before, after;
    t->scheduled = sp_sched_now(&before);
    for (; t->done < t->count; t->done++) {
        uint64_t v[3] = {0, 0, 0};
        int first = t->done == 0 && t->checked;
        if (!t->get(t->ctx, t->port, v, t->why, sizeof(t->why), first ? t->checked : NULL, t->checked_len,
                    first ? t->negotiated : NULL))
            break;
        t->connect_ns[t->done] = v[0];
        t->tls_ns[t->done] = v[1];
        t->total_ns[t->done] = v[2];
    }
    t->scheduled &= sp_sched_now(&after);
    t->wait_ns = after.wait_ns - before.wait_ns;
    return NULL;
}

int sp_https_get_clients(int port, int count, int threads, sp_one_get get, void *ctx)
{
    signal(SIGPIPE, SIG_IGN);         /* a server gone mid-request is a failed request, said in the reply */
    size_t slots = (size_t)count * (size_t)threads;
    uint64_t *connect_ns = calloc(slots, sizeof(uint64_t)), *tls_ns = calloc(slots, sizeof(uint64_t)),
             *total_ns = calloc(slots, sizeof(uint64_t));
    struct get_thread *t = calloc((size_t)threads, sizeof(*t));
    pthread_t *ids = calloc((size_t)threads, sizeof(pthread_t));
    char checked[REASON_MAX] = "", why[300] = "";
    sp_negotiated negotiated = {0};        /* known stays 0 where the backend does not record */
    int started = 0, done = 0, ok = connect_ns && tls_ns && total_ns && t && ids;
    uint64_t start = sp_now_ns(SP_WALL), cpu0 = sp_now_ns(SP_PROCESS_CPU);
    for (; ok && started < threads; started++) {
        size_t at = (size_t)started * (size_t)count;
        t[started] = (struct get_thread){.port = port, .count = count, .get = get, .ctx = ctx,
                                         .connect_ns = connect_ns + at, .tls_ns = tls_ns + at, .total_ns = total_ns + at,
                                         .checked = started == 0 ? checked : NULL, .checked_len = sizeof(checked),
                                         .negotiated = started == 0 ? &negotiated : NULL};
        if (threads == 1)
            get_thread_main(&t[0]);                          /* no thread for one client */
        else if (pthread_create(&ids[started], NULL, get_thread_main, &t[started]) != 0)
            break;
    }
    for (int i = 0; threads > 1 && i < started; i++)
        pthread_join(ids[i], NULL);
    uint64_t loop_ns = sp_now_ns(SP_WALL) - start, cpu_ns = sp_now_ns(SP_PROCESS_CPU) - cpu0;
    if (!ok)
        snprintf(why, sizeof(why), "out of memory for %d requests", count);
    else if (started < threads)
        snprintf(why, sizeof(why), "could start only %d of %d client threads", started, threads);
    for (int i = 0; ok && i < started && !why[0]; i++)
        if (t[i].why[0])
            snprintf(why, sizeof(why), "%s", t[i].why);
    /* The finished requests, thread by thread: each thread's are its slice's first `done`. */
    for (int i = 0; ok && i < started; i++) {
        memmove(connect_ns + done, t[i].connect_ns, (size_t)t[i].done * sizeof(uint64_t));
        memmove(tls_ns + done, t[i].tls_ns, (size_t)t[i].done * sizeof(uint64_t));
        memmove(total_ns + done, t[i].total_ns, (size_t)t[i].done * sizeof(uint64_t));
        done += t[i].done;
    }
    printf("{\"type\":\"requests\",\"library\":");
    json_string(sp_library_version());
    json_u64_field("connect_ns", connect_ns, done);
    json_u64_field("pretransfer_ns", tls_ns, done);
    json_u64_field("total_ns", total_ns, done);
    /* the whole loop, each request's set-up and tear-down included: requests per second */
    printf(",\"loop_ns\":%llu,\"cpu_ns\":%llu,\"threads\":%d", (unsigned long long)loop_ns,
           (unsigned long long)cpu_ns, threads);
    uint64_t waited = 0;
    int scheduled = ok && started > 0;
    for (int i = 0; ok && i < started; i++) {
        waited += t[i].wait_ns;
        scheduled &= t[i].scheduled;
    }
    if (scheduled)           /* every client thread's run-queue wait, together */
        printf(",\"wait_ns\":%llu", (unsigned long long)waited);
    if (checked[0]) {
        printf(",\"checked\":");
        json_string(checked);
    }
    json_negotiated(&negotiated);
    if (why[0]) {
        printf(",\"error\":");
        json_string(why);
    }
    printf("}\n");
    free(connect_ns);
    free(tls_ns);
    free(total_ns);
    free(t);
    free(ids);
    return (size_t)done == slots ? 0 : 1;
}
