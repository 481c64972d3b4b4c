/*
 * The message segment: big message buffers (deck_msg_create above DECK_MSG_BUF_LIMIT) and the
 * receive windows of the chunked protocol-3 fallback, so that senders write them directly.
 *
 * DECK 1.0 bump-allocated it; here a first-fit list of blocks laid out in the segment itself
 * lets destroyed messages give their space back. A block is one header line, then
 * roundup64(size) + 64 bytes (the "roundup64(size) + 128" of DECK 1.0), data 64-byte aligned.
 * Free neighbours are merged while searching. One mutex: allocation is rare next to sends.
 */
#include <string.h>
#include "sci.h"

typedef struct block {
    uint64_t size;                 /* bytes of the whole block, header included */
    uint64_t used;
    uint8_t  pad[DECK_SEG_LINE - 16];
} block_t;

static pthread_mutex_t mseg_lock = PTHREAD_MUTEX_INITIALIZER;

static block_t *first(void) { return sci.mseg.addr; }
static char    *end(void)   { return (char *)sci.mseg.addr + sci.mseg.size; }
static block_t *after(block_t *b) { return (block_t *)((char *)b + b->size); }

void sci_mseg_init(void)
{
    block_t *b = first();
    b->size = sci.mseg.size;
    b->used = 0;
}

void *sci_mseg_alloc(size_t size)
{
    if (size > sci.mseg.size) return NULL;
    uint64_t need = sizeof(block_t) + deck_seg_roundup(size) + DECK_SEG_LINE;
    void *p = NULL;
    pthread_mutex_lock(&mseg_lock);
    for (block_t *b = first(); (char *)b < end(); b = after(b)) {
        if (b->used) continue;
        while ((char *)after(b) < end() && !after(b)->used) b->size += after(b)->size;
        if (b->size < need) continue;
        if (b->size - need >= 2 * DECK_SEG_LINE) {       /* split: the rest stays free */
            block_t *rest = (block_t *)((char *)b + need);
            rest->size = b->size - need;
            rest->used = 0;
            b->size = need;
        }
        b->used = 1;
        p = b + 1;
        break;
    }
    pthread_mutex_unlock(&mseg_lock);
    return p;
}

/* 1 with the offset when [buf, buf+len) lies in this process's message segment. */
int sci_mseg_offset(const void *buf, size_t len, uint64_t *off)
{
    const char *b = buf, *base = sci.mseg.addr;
    if (!base || b < base || b > end() || len > (size_t)(end() - b)) return 0;
    *off = (uint64_t)(b - base);
    return 1;
}

void sci_mseg_free(void *buf)
{
    pthread_mutex_lock(&mseg_lock);
    ((block_t *)buf - 1)->used = 0;
    pthread_mutex_unlock(&mseg_lock);
}

void *sci_msg_alloc(size_t size)
{
    return size > sci.cfg.buf_limit ? sci_mseg_alloc(size) : NULL;
}

int sci_msg_free(void *buf)
{
    uint64_t off;
    if (!sci_mseg_offset(buf, 0, &off) || off < sizeof(block_t)) return 0;
    sci_mseg_free(buf);
    return 1;
}
