/*
 * DECK/SCI for dynamic processes (deck_init_dynamic) on one host, started by the auto
 * transport. There is no nodes file and no N: a process takes the first free host-local node
 * number below SCI_DYN_NODES (deck_seg_claim) and names its segments with a random token kept in
 * its claim; its contact tells a peer the host it runs on (the kernel's boot id), that number
 * and its nonce, so the peer can tell whether it shares this host's memory and which process the
 * number stands for now. The token is not in the contact: only processes of this user find it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sci.h"

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

static char boot_id[40];

static int read_boot_id(void)
{
    int fd = open(BOOT_ID_PATH, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return deck_fail_errno(DECK_EIO, errno, "deck_init_dynamic: cannot read %s", BOOT_ID_PATH);
    ssize_t n = read(fd, boot_id, sizeof boot_id - 1);
    close(fd);
    if (n <= 0) return deck_fail(DECK_EIO, "deck_init_dynamic: %s is empty", BOOT_ID_PATH);
    boot_id[n] = '\0';
    boot_id[strcspn(boot_id, "\n")] = '\0';
    return DECK_OK;
}

int sci_init_dynamic(int deck_id)
{
    memset(&sci, 0, sizeof sci);
    int rc, node;
    sci.dynamic = 1;
    if ((rc = read_boot_id()) || (rc = deck_seg_random_token(sci.token, sizeof sci.token)) ||
        (rc = deck_seg_open(0, sci.token)))
        return rc;
    sci.n = SCI_DYN_NODES;                                   /* the control segment's size */
    if ((rc = deck_seg_claim(&sci.claim, SCI_DYN_NODES, &node))) {
        deck_seg_close();
        memset(&sci, 0, sizeof sci);
        return rc;
    }
    /* The control segment is not available to peers until everything else exists. */
    if (!(rc = sci_start_tables(node, SCI_DYN_NODES)) && !(rc = deck_seg_room(sci.cfg.mseg)) &&
        !(rc = deck_seg_create(&sci.ctl, SCI_SEG_CTL, sci_ctl_size())) && !(rc = deck_seg_prepare(&sci.ctl)) &&
        !(rc = deck_seg_map_local(&sci.ctl)))
        rc = sci_publish_ctl(deck_id);
    if (rc) sci_release_all();
    return rc;
}

int sci_dyn_contact(char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s.%d.%llx", boot_id, sci.self, (unsigned long long)sci.nonce);
    return n > 0 && (size_t)n < len ? DECK_OK : deck_fail(DECK_EINVAL, "deck_contact: buffer of %zu bytes too small", len);
}

const char *sci_boot_id(void) { return boot_id; }
