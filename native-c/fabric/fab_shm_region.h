/*
 * The head of an shm endpoint's region, as libfabric's shm provider lays it out (struct
 * smr_region in its include/ofi_shm.h, region versions 4 and 5: libfabric 1.17 to 1.19). The
 * region is the endpoint's POSIX shared-memory object "/dev/shm/<pid>:<n>:<m>" (fab_reap.c),
 * mapped by its owner and by every process that sends to it. This library reads nothing of it
 * but these first 32 bytes, and writes only to release the lock of a region whose holder was
 * killed (fab_rescue.c says when that is safe).
 *
 *   offset  0        1        2                4                8      9      10..11
 *          +--------+--------+----------------+----------------+------+------+------+
 *          |version | resv   | flags          | pid (owner)    | cma  | cma  | pad  |
 *          |  4, 5  |        |                |                | peer | self |      |
 *          +--------+--------+----------------+----------------+------+------+------+
 *   offset 12                16                                24               28
 *          +----------------+--------------------------------+----------------+
 *          | max_sar_buf_   | base_addr (the owner's         | lock           | signal, the
 *          | per_peer       | mapping, a pointer)            | pthread spin   | queues' offsets...
 *          +----------------+--------------------------------+----------------+
 *
 * The lock guards the region's queues: its owner takes it to read them, a sender to push a
 * command into them. Version 6 (libfabric 1.20) has no such lock: its queues are lock-free.
 */
#ifndef FAB_SHM_REGION_H
#define FAB_SHM_REGION_H

#include <pthread.h>
#include <stdint.h>

struct fab_shm_region_head {
    uint8_t            version;
    uint8_t            resv;
    uint16_t           flags;
    int                pid;
    uint8_t            cma_cap_peer;
    uint8_t            cma_cap_self;
    uint32_t           max_sar_buf_per_peer;
    void              *base_addr;
    pthread_spinlock_t lock;
};

/* Maps the head of the shm object `object` (a name in /dev/shm, no slash) read-write, when it is
 * a region of a version laid out as above whose owner is `pid`; NULL otherwise (another
 * version, another owner, no such object). Undone by fab_shm_region_unmap. */
struct fab_shm_region_head *fab_shm_region_map(const char *object, long pid);
void fab_shm_region_unmap(struct fab_shm_region_head *head);

#endif
