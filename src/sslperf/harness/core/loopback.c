/* HTTPS over loopback, the part no library's API is in: sockets, the accept loop, the request loop and their
 * replies (see loopback.h; each backend's loopback.c does one connection's TLS). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
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

int sp_https_serve(int max_connections, const char *ca_file, void (*serve)(void *ctx, int fd), void *ctx)
{
    struct sockaddr_in addr;
    int fd = listen_loopback(&addr, 64), one = 1;
    if (fd < 0) {
        sp_loopback_fail("cannot listen on 127.0.0.1", NULL);
        return 1;
    }
    printf("{\"type\":\"listening\",\"port\":%d,\"ca_file\":", ntohs(addr.sin_port));
    json_string(ca_file);
    printf(",\"library\":");
    json_string(sp_library_version());
    printf("}\n");
    fflush(stdout);
    for (int served = 0; served < max_connections; served++) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 30000) <= 0)
            break;                                         /* idle: stop by ourselves */
        int conn = accept(fd, NULL, NULL);
        if (conn < 0)
            continue;
        setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        serve(ctx, conn);
        close(conn);
    }
    close(fd);
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

int sp_https_get_loop(int port, int count, sp_one_get get, void *ctx)
{
    uint64_t *connect_ns = calloc((size_t)count, sizeof(uint64_t)), *tls_ns = calloc((size_t)count, sizeof(uint64_t)),
             *total_ns = calloc((size_t)count, sizeof(uint64_t));
    char why[300] = "", checked[REASON_MAX] = "";
    int done = 0;
    uint64_t start = sp_now_ns(SP_WALL);
    if (!connect_ns || !tls_ns || !total_ns)
        snprintf(why, sizeof(why), "out of memory for %d requests", count);
    for (; !why[0] && done < count; done++) {
        uint64_t t[3] = {0, 0, 0};
        if (!get(ctx, port, t, why, sizeof(why), done == 0 ? checked : NULL, sizeof(checked)))
            break;
        connect_ns[done] = t[0];
        tls_ns[done] = t[1];
        total_ns[done] = t[2];
    }
    printf("{\"type\":\"requests\",\"library\":");
    json_string(sp_library_version());
    json_u64_field("connect_ns", connect_ns, connect_ns ? done : 0);
    json_u64_field("pretransfer_ns", tls_ns, tls_ns ? done : 0);
    json_u64_field("total_ns", total_ns, total_ns ? done : 0);
    /* the whole loop, each request's set-up and tear-down included: requests per second */
    printf(",\"loop_ns\":%llu", (unsigned long long)(sp_now_ns(SP_WALL) - start));
    if (checked[0]) {
        printf(",\"checked\":");
        json_string(checked);
    }
    if (why[0]) {
        printf(",\"error\":");
        json_string(why);
    }
    printf("}\n");
    free(connect_ns);
    free(tls_ns);
    free(total_ns);
    return done == count ? 0 : 1;
}
