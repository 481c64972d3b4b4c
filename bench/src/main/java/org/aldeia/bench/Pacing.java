package org.aldeia.bench;

/**
 * How long each cell runs. Iteration counts are not fixed: the client times the warm-up, then
 * picks the count that fills {@code targetSeconds}, so a 5 µs transport and a 5 ms one both get
 * a cell of about the same duration (the 1 MiB cells simply get fewer round trips).
 */
record Pacing(double warmupSeconds, double targetSeconds, int minIterations, int maxIterations,
        double streamSeconds) {

    /** The full run: about 1.3 s per ping-pong cell, 2 s of streaming. */
    static final Pacing DEFAULT = new Pacing(0.3, 1.0, 20, 500_000, 2.0);
    /** A smoke test: tens of milliseconds per cell. */
    static final Pacing QUICK = new Pacing(0.02, 0.05, 5, 20_000, 0.1);

    /** The count that fills {@code seconds} when one unit takes {@code nanosPerUnit}, within the bounds. */
    long count(double seconds, double nanosPerUnit) {
        double wanted = seconds * 1e9 / Math.max(nanosPerUnit, 1.0);
        return (long) Math.max(minIterations, Math.min(maxIterations, Math.ceil(wanted)));
    }
}
