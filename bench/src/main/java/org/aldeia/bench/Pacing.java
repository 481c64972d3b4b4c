package org.aldeia.bench;

/**
 * How long each cell runs. Before the first cell, every ping-pong size and stream write size
 * runs untimed in turns for {@code sweepSeconds} (BenchClient's sweep). Iteration counts are
 * not fixed: the client times the warm-up, then picks the count that fills
 * {@code targetSeconds}, so a 5 µs transport and a 5 ms one both get a cell of about the same
 * duration (the 1 MiB cells simply get fewer round trips). The
 * connection set-up phase is counted instead: {@code setupWarmup} untimed connections, then
 * {@code setupConnections} timed ones, then untimed ones up to {@code setupSteadyAfter} in all,
 * then {@code setupConnections} timed again; so are the application and RMI phases, in calls.
 * The untimed connections before the steady set-up block are skipped (its cell is then n/a)
 * when, at the first block's pace, they would take longer than {@code setupSteadyBudgetSeconds}:
 * a transport whose connection costs tens of milliseconds (libfabric's shm, each endpoint of
 * which writes megabytes of fresh shared memory) would spend many minutes there and run out of
 * its row's time.
 */
record Pacing(double sweepSeconds, double warmupSeconds, double targetSeconds, int minIterations, int maxIterations,
        double streamSeconds, int setupWarmup, int setupConnections, int setupSteadyAfter, int applicationWarmup,
        int applicationCalls, int rmiWarmup, int rmiCalls, double setupSteadyBudgetSeconds) {

    /**
     * The full run: a sweep of 3 s, about 0.9 s per ping-pong cell, 1 s of streaming per write
     * size, 1000 timed connections after 2000 (the JIT under way) and 1000 more after 20 000
     * (the connect path compiled: scripts/connectrate.sh levels off between 10 000 and 20 000),
     * 10 000 application calls (as the program made) after 4000 untimed, 5000 RMI calls
     * after 3000 untimed; at most 100 s of untimed connections (a row has 4 minutes).
     */
    static final Pacing DEFAULT = new Pacing(3.0, 0.3, 0.6, 20, 500_000, 1.0, 2000, 1000, 20_000, 4000, 10_000, 3000,
            5000, 100);
    /**
     * A smoke test: a sweep of 0.1 s, tens of milliseconds per cell, 2 x 50 connections, 200
     * application and 50 RMI calls.
     */
    static final Pacing QUICK = new Pacing(0.1, 0.02, 0.05, 5, 20_000, 0.1, 5, 50, 60, 100, 200, 20, 50, 100);

    Pacing {
        if (setupSteadyAfter < setupWarmup + setupConnections) {
            throw new IllegalArgumentException("the steady set-up block (after " + setupSteadyAfter
                    + " connections) must start after the first one ends (" + (setupWarmup + setupConnections) + ")");
        }
    }

    /** The count that fills {@code seconds} when one unit takes {@code nanosPerUnit}, within the bounds. */
    long count(double seconds, double nanosPerUnit) {
        double wanted = seconds * 1e9 / Math.max(nanosPerUnit, 1.0);
        return (long) Math.max(minIterations, Math.min(maxIterations, Math.ceil(wanted)));
    }
}
