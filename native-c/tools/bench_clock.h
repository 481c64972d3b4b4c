/*
 * What every measuring tool (tools/bench_*.c) shares: the clock, pinning by PIN (1: process i on
 * CPU i; same: both on CPU 0), and the report of a ping-pong's round trips as one-way times.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline void bench_pin(int id)
{
    const char *how = getenv("PIN");
    if (!how)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(strcmp(how, "same") == 0 ? 0 : id, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
}

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts the round trips (us) and prints median, p99 and mean of their halves after `what`. */
static inline void bench_report(const char *what, double *round_trip, int n)
{
    double total = 0;
    for (int k = 0; k < n; k++)
        total += round_trip[k];
    qsort(round_trip, (size_t)n, sizeof *round_trip, bench_by_value);
    printf("%s, %d round trips: one-way median %.3f us, p99 %.3f us, mean %.3f us\n", what, n,
           round_trip[n / 2] / 2, round_trip[(size_t)n * 99 / 100] / 2, total / n / 2);
}

#endif
