/*
 * Where things are in the sci transport's segments (the layout drawn in sci.h): every offset
 * is a function of N (sci.n), M (SCI_MAX_MBOX) and DECK_MEDBUF_SIZE, which all processes of a
 * run share, so a process finds a field in a peer's segment the way it finds it in its own.
 */
#include "sci.h"

#define MBOX_AREA_P1    0
#define MBOX_AREA_OWNER (SCI_P1_SLOTS * DECK_SEG_LINE)
#define MBOX_AREA_REQ   (MBOX_AREA_OWNER + DECK_SEG_LINE)
#define MBOX_AREA_BUF   (MBOX_AREA_REQ + DECK_SEG_LINE)

/* ---- control segment ---- */

static size_t ident_off(void)     { return DECK_SEG_LINE; }
static size_t barrier_off(void)   { return ident_off() + DECK_SEG_LINE; }
static size_t barrier_bytes(void) { return deck_seg_roundup(4 + 4 * (size_t)sci.n); }
static size_t hello_off(void)     { return barrier_off() + barrier_bytes(); }
static size_t names_off(void)     { return hello_off() + deck_seg_roundup(4 * (size_t)sci.n); }
static size_t flows_off(void)     { return names_off() + SCI_MAX_MBOX * sizeof(sci_name_t); }
static size_t marks_off(void)     { return flows_off() + (size_t)sci.n * SCI_MAX_MBOX * sizeof(sci_flow_t); }
static char  *ctl(int node)       { return sci.peer_ctl[node].addr; }

size_t       sci_ctl_size(void)
{
    return marks_off() + deck_seg_roundup((size_t)sci.n * SCI_MAX_MBOX * sizeof(sci_mark_t));
}
deck_bell_t *sci_ctl_bell(int node)                { return (deck_bell_t *)ctl(node); }
sci_ident_t *sci_ctl_ident(int node)               { return (sci_ident_t *)(ctl(node) + ident_off()); }
uint32_t    *sci_ctl_release(int node)             { return (uint32_t *)(ctl(node) + barrier_off()); }
uint32_t    *sci_ctl_arrive(int node, int from)    { return sci_ctl_release(node) + 1 + from; }
uint32_t    *sci_ctl_hello(int node, int from)     { return (uint32_t *)(ctl(node) + hello_off()) + from; }

sci_name_t *sci_name_at(int owner, int slot)
{
    return (sci_name_t *)(ctl(owner) + names_off()) + slot;
}

sci_flow_t *sci_flow_at(int ctl_node, int receiver, int slot)
{
    return (sci_flow_t *)(ctl(ctl_node) + flows_off()) + (size_t)receiver * SCI_MAX_MBOX + slot;
}

sci_mark_t *sci_mark_at(int ctl_node, int receiver, int slot)
{
    return (sci_mark_t *)(ctl(ctl_node) + marks_off()) + (size_t)receiver * SCI_MAX_MBOX + slot;
}

/* ---- mailbox segment ---- */

static size_t senders_bytes(void) { return deck_seg_roundup(((size_t)sci.n + 63) / 64 * 8); }
static size_t signals_off(void)   { return DECK_SEG_LINE + senders_bytes(); }
static size_t signals_bytes(void) { return deck_seg_roundup((size_t)sci.n); }
static size_t area_bytes(void)    { return MBOX_AREA_BUF + deck_seg_roundup(sci.cfg.medbuf); }
static char  *area(void *seg, int sender)
{
    return (char *)seg + signals_off() + signals_bytes() + (size_t)sender * area_bytes();
}

size_t       sci_mbox_seg_size(void)               { return signals_off() + signals_bytes() + (size_t)sci.n * area_bytes(); }
deck_bell_t *sci_mbox_bell(void *seg)               { return seg; }
uint64_t    *sci_mbox_senders(void *seg)            { return (uint64_t *)((char *)seg + DECK_SEG_LINE); }
uint8_t     *sci_mbox_signal(void *seg, int sender) { return (uint8_t *)seg + signals_off() + sender; }
uint8_t     *sci_mbox_ring(void *seg, int sender)   { return (uint8_t *)area(seg, sender) + MBOX_AREA_P1; }
uint64_t    *sci_mbox_owner(void *seg, int sender)  { return (uint64_t *)(area(seg, sender) + MBOX_AREA_OWNER); }
sci_p3_request_t *sci_mbox_request(void *seg, int sender) { return (sci_p3_request_t *)(area(seg, sender) + MBOX_AREA_REQ); }
uint8_t     *sci_mbox_medbuf(void *seg, int sender) { return (uint8_t *)area(seg, sender) + MBOX_AREA_BUF; }
