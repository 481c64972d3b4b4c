/*
 * FIFO of work requests (the thesis's shared request queue, Fig. 4.17): a ring that doubles
 * when full, so posting never fails for lack of room, only for lack of memory. The queue pair
 * that owns it does the locking.
 */
#include <stdlib.h>

#include "mv_internal.h"

static int grow(struct mv_wrq *q, uint32_t need)
{
    uint32_t ncap = q->cap ? q->cap : 16;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2)
            return -1;
        ncap *= 2;
    }
    VAPI_sr_desc_t *ring = malloc((size_t)ncap * sizeof *ring);
    if (!ring)
        return -1;
    for (uint32_t i = 0; i < q->count; i++)
        ring[i] = q->ring[(q->head + i) % q->cap];
    free(q->ring);
    q->ring = ring;
    q->cap = ncap;
    q->head = 0;
    return 0;
}

int mv_wrq_push(struct mv_wrq *q, const VAPI_sr_desc_t *list, uint32_t n)
{
    if ((uint64_t)q->count + n > UINT32_MAX)
        return -1;
    if (q->count + n > q->cap && grow(q, q->count + n))
        return -1;
    for (uint32_t i = 0; i < n; i++)
        q->ring[(q->head + q->count + i) % q->cap] = list[i];
    q->count += n;
    return 0;
}

const VAPI_sr_desc_t *mv_wrq_front(const struct mv_wrq *q)
{
    return q->count ? &q->ring[q->head] : NULL;
}

const VAPI_sr_desc_t *mv_wrq_at(const struct mv_wrq *q, uint32_t i)
{
    return i < q->count ? &q->ring[(q->head + i) % q->cap] : NULL;
}

void mv_wrq_pop(struct mv_wrq *q)
{
    q->head = (q->head + 1) % q->cap;
    q->count--;
}

void mv_wrq_free(struct mv_wrq *q)
{
    free(q->ring);
    *q = (struct mv_wrq){ 0 };
}
