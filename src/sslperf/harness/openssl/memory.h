/* Counting the library's bytes for the memory commands (memory.c: TLS over BIO pairs; quic_memory.c: QUIC over
 * loopback UDP): in use now, the peak since memory_start(), and the one reply line both print. */
#ifndef SSLPERF_MEMORY_H
#define SSLPERF_MEMORY_H

#include <stddef.h>

/* Bytes in use now: the allocator hooks' count, or the C allocator's. */
size_t memory_in_use(void);
/* The baseline (bytes in use now), from which the peak is counted again. */
size_t memory_start(void);
/* Takes the bytes in use now into the peak (needed where the C allocator's statistics are read, not hooks). */
void memory_sample_peak(void);
/* {"type":"memory",...}: N connections' bytes, as their server and client halves gave them back when freed, and
 * what the first connection was checked to have negotiated (`checked`, when not NULL). */
void memory_reply(const char *case_id, long n, size_t baseline, size_t all, size_t without_servers,
                  size_t without_clients, const char *checked);

#endif
