/*
 * What the DECK and MicroVAPI measuring tools (tools/bench_*.c) share: bench_clock.h, and their
 * command line, which runs two DECK nodes.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "bench_clock.h"
#include "util_deck.h"

/* The tools' arguments, [size [sci|tcp [iterations]]] (size at most max): runs `node` as the two
 * nodes of a DECK static run over that transport (sci by default); 2 with the usage on bad values. */
static inline int bench_main(int argc, char **argv, unsigned long *size, int *iterations, unsigned long max,
                             util_node_fn node)
{
    if (argc > 1)
        *size = strtoul(argv[1], NULL, 10);
    if (argc > 3)
        *iterations = atoi(argv[3]);
    if (*size > max || *iterations < 1) {
        fprintf(stderr, "usage: %s [size <= %lu [sci|tcp [iterations > 0]]]\n", argv[0], max);
        return 2;
    }
    return util_run_nodes_on(argc > 2 ? argv[2] : "sci", 2, node, NULL, 600);
}

#endif
