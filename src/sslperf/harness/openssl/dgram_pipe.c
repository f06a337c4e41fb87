/* A pair of in-memory datagram BIOs for DTLS: what one end writes, the other reads a datagram at a time, as over
 * UDP on loopback with no loss. BIO_s_dgram_pair came with OpenSSL 3.2 only, and a BIO pair (a byte stream) would
 * let a read take parts of two datagrams, which DTLS's record layer cannot use. Each direction is one buffer made
 * when the pair is (so memory per connection does not count it), datagrams kept with their lengths; a datagram
 * longer than the reader's buffer is cut, as a socket cuts it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "tls.h"

#include <openssl/bio.h>

#define PIPE_BYTES (24 * 1024)      /* a whole flight of a DTLS 1.2 handshake, at an MTU of DTLS_MTU */
#define LENGTH_BYTES 2

typedef struct {
    unsigned char data[PIPE_BYTES];
    size_t head, tail;             /* read from head, written at tail; both back to 0 once it is read empty */
    int refs;
} direction;

typedef struct {
    direction *in, *out;
} end;

static BIO_METHOD *pipe_method;

static int pipe_write(BIO *bio, const char *buf, int len)
{
    direction *out = ((end *)BIO_get_data(bio))->out;
    BIO_clear_retry_flags(bio);
    if (len < 0 || len > 0xffff || out->tail + LENGTH_BYTES + (size_t)len > PIPE_BYTES)
        return -1;                 /* a flight larger than the pipe: an error, never a datagram lost unsaid */
    out->data[out->tail] = (unsigned char)(len >> 8);
    out->data[out->tail + 1] = (unsigned char)len;
    memcpy(out->data + out->tail + LENGTH_BYTES, buf, (size_t)len);
    out->tail += LENGTH_BYTES + (size_t)len;
    return len;
}

static int pipe_read(BIO *bio, char *buf, int len)
{
    direction *in = ((end *)BIO_get_data(bio))->in;
    BIO_clear_retry_flags(bio);
    if (in->head == in->tail) {
        in->head = in->tail = 0;
        BIO_set_retry_read(bio);
        return -1;
    }
    size_t size = (size_t)in->data[in->head] << 8 | in->data[in->head + 1];
    size_t taken = len < 0 ? 0 : size < (size_t)len ? size : (size_t)len;
    memcpy(buf, in->data + in->head + LENGTH_BYTES, taken);
    in->head += LENGTH_BYTES + size;
    return (int)taken;
}

static long pipe_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    direction *in = BIO_get_data(bio) ? ((end *)BIO_get_data(bio))->in : NULL;
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1;
    case BIO_CTRL_PENDING:         /* the next datagram's size */
        return in && in->head != in->tail ? (long)(in->data[in->head] << 8 | in->data[in->head + 1]) : 0;
#ifdef BIO_CTRL_DGRAM_QUERY_MTU
    case BIO_CTRL_DGRAM_QUERY_MTU:
        return DTLS_MTU;
#endif
#ifdef BIO_CTRL_DGRAM_GET_MTU_OVERHEAD
    case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD:
        return 28;                 /* IPv4 and UDP headers, as a UDP socket on loopback says */
#endif
    default:
        return 0;                  /* timers, peers, connect: nothing to do in memory */
    }
}

static void release(direction *d)
{
    if (d && --d->refs == 0)
        free(d);
}

static int pipe_destroy(BIO *bio)
{
    end *e = BIO_get_data(bio);
    if (e) {
        release(e->in);
        release(e->out);
        free(e);
        BIO_set_data(bio, NULL);
    }
    return 1;
}

static BIO *pipe_end(direction *in, direction *out)
{
    end *e = malloc(sizeof(*e));
    BIO *bio = e ? BIO_new(pipe_method) : NULL;
    if (!bio) {
        free(e);
        return NULL;
    }
    e->in = in, e->out = out;
    in->refs++, out->refs++;
    BIO_set_data(bio, e);
    BIO_set_init(bio, 1);
    return bio;
}

static void make_method(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sslperf datagram pipe");
    if (m && BIO_meth_set_write(m, pipe_write) && BIO_meth_set_read(m, pipe_read) && BIO_meth_set_ctrl(m, pipe_ctrl)
        && BIO_meth_set_destroy(m, pipe_destroy))
        pipe_method = m;
    else
        BIO_meth_free(m);
}

int dgram_pair(BIO **a, BIO **b)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;      /* threads prepare their cases at once */
    pthread_once(&once, make_method);
    direction *ab = pipe_method ? calloc(1, sizeof(*ab)) : NULL, *ba = ab ? calloc(1, sizeof(*ba)) : NULL;
    *a = *b = NULL;
    if (!ab || !ba) {
        free(ab), free(ba);
        return 0;
    }
    *a = pipe_end(ba, ab);
    *b = *a ? pipe_end(ab, ba) : NULL;
    if (!*b) {
        if (*a)
            BIO_free(*a);          /* its references were the only ones: both directions go with it */
        else
            free(ab), free(ba);
        *a = NULL;
        return 0;
    }
    return 1;
}
