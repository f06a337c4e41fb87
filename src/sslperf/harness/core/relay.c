/* An emulated network path for QUIC over loopback: a user-space UDP relay
 * that delays, jitters and drops datagrams, for kernels without netem (and
 * for users without the rights to a network namespace).
 *
 *   harness udp-relay SERVER_PORT DELAY_US JITTER_US LOSS_PPM SEED IDLE_MS
 *
 * Binds 127.0.0.1 only (ephemeral port) and prints {"type":"relaying",...}
 * with it. Each client address the relay hears from gets an upstream socket
 * of its own to 127.0.0.1:SERVER_PORT, so the server sees one peer per
 * client. Every datagram, in either direction, is held for DELAY_US plus a
 * uniform draw in [-JITTER_US, +JITTER_US] (never below zero; datagrams may
 * then pass each other, as netem's jitter lets them) and dropped with
 * probability LOSS_PPM per million, from a generator seeded with SEED so a
 * path is the same path again. The round trip adds twice the delay. Stops
 * after IDLE_MS without a datagram and prints what it forwarded and dropped. */
#define _GNU_SOURCE                 /* ppoll: a wait to the microsecond */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_PEERS 512
#define MAX_HELD 65536
#define MAX_DATAGRAM 65536

typedef struct {
    struct sockaddr_in client;    /* where the downstream replies go */
    int upstream;                 /* connected to the server */
} peer;

typedef struct {
    uint64_t due_ns;
    int fd;                       /* the socket it leaves by */
    struct sockaddr_in to;        /* for the downstream socket; upstream sockets are connected */
    int to_client;
    size_t len;
    unsigned char *data;
} held;

static uint64_t rng_state;

/* xorshift64*: small, fast and, seeded, the same every time. */
static uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* The held datagrams, a binary heap on their due time: with jitter they leave in another order than they came. */
static struct {
    held items[MAX_HELD];
    size_t n;
} queue;

static void swap(size_t a, size_t b)
{
    held t = queue.items[a];
    queue.items[a] = queue.items[b];
    queue.items[b] = t;
}

static void push(const held *h)
{
    size_t i = queue.n++;
    queue.items[i] = *h;
    while (i > 0 && queue.items[(i - 1) / 2].due_ns > queue.items[i].due_ns) {
        swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void pop(void)
{
    queue.items[0] = queue.items[--queue.n];
    for (size_t i = 0;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < queue.n && queue.items[l].due_ns < queue.items[least].due_ns)
            least = l;
        if (r < queue.n && queue.items[r].due_ns < queue.items[least].due_ns)
            least = r;
        if (least == i)
            break;
        swap(i, least);
        i = least;
    }
}

/* Holds a datagram for its delay; 0 when it is dropped (loss, or a full queue). */
static int hold(int fd, const struct sockaddr_in *to, const unsigned char *data, size_t len, uint64_t delay_ns,
                uint64_t jitter_ns, uint32_t loss_ppm)
{
    if (next_random() % 1000000 < loss_ppm || queue.n == MAX_HELD)
        return 0;
    int64_t wobble = jitter_ns ? (int64_t)(next_random() % (2 * jitter_ns + 1)) - (int64_t)jitter_ns : 0;
    int64_t delay = (int64_t)delay_ns + wobble;
    held h = {.fd = fd, .to_client = to != NULL, .len = len, .data = malloc(len)};
    if (!h.data)
        return 0;
    memcpy(h.data, data, len);
    if (to)
        h.to = *to;
    h.due_ns = sp_now_ns(SP_WALL) + (uint64_t)(delay > 0 ? delay : 0);
    push(&h);
    return 1;
}

/* Sends what is due; returns the nanoseconds until the next one is (or -1 when none is held). */
static int64_t release_due(void)
{
    uint64_t now = sp_now_ns(SP_WALL);
    while (queue.n && queue.items[0].due_ns <= now) {
        held *h = &queue.items[0];
        if (h->to_client)
            sendto(h->fd, h->data, h->len, 0, (struct sockaddr *)&h->to, sizeof(h->to));
        else
            send(h->fd, h->data, h->len, 0);
        free(h->data);
        pop();
    }
    return queue.n ? (int64_t)(queue.items[0].due_ns - now) : -1;
}

static int peer_of(peer *peers, int *n, const struct sockaddr_in *client, int server_port)
{
    for (int i = 0; i < *n; i++)
        if (peers[i].client.sin_port == client->sin_port && peers[i].client.sin_addr.s_addr == client->sin_addr.s_addr)
            return i;
    if (*n == MAX_PEERS)
        return -1;
    struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons((uint16_t)server_port)};
    server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&server, sizeof(server)) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    peers[*n].client = *client;
    peers[*n].upstream = fd;
    return (*n)++;
}

int udp_relay(int argc, char **argv)
{
    (void)argc;
    int server_port = atoi(argv[0]), idle_ms = atoi(argv[5]);
    uint64_t delay_ns = strtoull(argv[1], NULL, 10) * 1000, jitter_ns = strtoull(argv[2], NULL, 10) * 1000;
    uint32_t loss_ppm = (uint32_t)strtoul(argv[3], NULL, 10);
    rng_state = strtoull(argv[4], NULL, 10) | 1;
    if (server_port < 1 || server_port > 65535 || loss_ppm > 1000000 || idle_ms < 1)
        return json_refusal("error", "udp-relay", "bad relay arguments");
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);          /* loopback only */
    socklen_t len = sizeof(addr);
    int down = socket(AF_INET, SOCK_DGRAM, 0);
    if (down < 0 || bind(down, (struct sockaddr *)&addr, sizeof(addr)) != 0
        || getsockname(down, (struct sockaddr *)&addr, &len) != 0)
        return json_refusal("error", "udp-relay", "cannot bind a UDP socket on 127.0.0.1");
    printf("{\"type\":\"relaying\",\"port\":%d,\"to\":%d}\n", ntohs(addr.sin_port), server_port);
    fflush(stdout);

    static peer peers[MAX_PEERS];
    static struct pollfd fds[MAX_PEERS + 1];
    static unsigned char buf[MAX_DATAGRAM];
    int n_peers = 0;
    uint64_t forwarded = 0, dropped = 0, last = sp_now_ns(SP_WALL);
    for (;;) {
        int64_t next = release_due();
        if (queue.n == 0 && sp_now_ns(SP_WALL) - last > (uint64_t)idle_ms * 1000000)
            break;
        fds[0] = (struct pollfd){.fd = down, .events = POLLIN};
        for (int i = 0; i < n_peers; i++)
            fds[i + 1] = (struct pollfd){.fd = peers[i].upstream, .events = POLLIN};
        /* Wake for new datagrams or for the next one due, whichever comes first. */
        int64_t wait = next < 0 || next > 50000000 ? 50000000 : next;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = (long)wait};
        if (ppoll(fds, (nfds_t)n_peers + 1, &timeout, NULL) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            struct sockaddr_in from;
            socklen_t from_len = sizeof(from);
            ssize_t got = recvfrom(down, buf, sizeof(buf), 0, (struct sockaddr *)&from, &from_len);
            int p = got > 0 ? peer_of(peers, &n_peers, &from, server_port) : -1;
            if (p >= 0) {
                int kept = hold(peers[p].upstream, NULL, buf, (size_t)got, delay_ns, jitter_ns, loss_ppm);
                forwarded += kept;
                dropped += !kept;
                last = sp_now_ns(SP_WALL);
            }
        }
        for (int i = 0; i < n_peers; i++) {
            if (!(fds[i + 1].revents & POLLIN))
                continue;
            ssize_t got = recv(peers[i].upstream, buf, sizeof(buf), 0);
            if (got > 0) {
                int kept = hold(down, &peers[i].client, buf, (size_t)got, delay_ns, jitter_ns, loss_ppm);
                forwarded += kept;
                dropped += !kept;
                last = sp_now_ns(SP_WALL);
            }
        }
    }
    printf("{\"type\":\"relayed\",\"forwarded\":%llu,\"dropped\":%llu,\"peers\":%d}\n", (unsigned long long)forwarded,
           (unsigned long long)dropped, n_peers);
    for (int i = 0; i < n_peers; i++)
        close(peers[i].upstream);
    close(down);
    return 0;
}
