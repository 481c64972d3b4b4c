package org.aldeia.samples;

/**
 * The thesis's ping-pong formulas (seeds/003, equations 5.1 to 5.5), kept apart from the
 * measuring code so they can be checked against the thesis's own figures.
 *
 * <pre>
 *   t_c            total time of i round trips, milliseconds          (5.1)
 *   t_um = t_c·10³ / (2·i)       one-way time per message, µs          (5.2)
 *   t_us = t_c / (2·10³)         one-way share of t_c, seconds         (5.3)
 *   v    = d·i / t_us            one-way bandwidth, bytes per second   (5.4)
 *   v(Mb/s) = v(B/s) · 8 / 1024² (5.5)
 * </pre>
 */
public final class ThesisFormulas {

    private ThesisFormulas() {
    }

    /** Equation 5.2: one-way time in µs of one message, from {@code totalMillis} for {@code iterations} round trips. */
    public static double oneWayMicros(double totalMillis, int iterations) {
        return totalMillis * 1e3 / (2.0 * iterations);
    }

    /** Equations 5.3 and 5.4: one-way bandwidth in bytes per second of {@code bytes}-byte messages. */
    public static double bytesPerSecond(long bytes, int iterations, double totalMillis) {
        double oneWaySeconds = totalMillis / 2e3;
        return bytes * (double) iterations / oneWaySeconds;
    }

    /** Equation 5.5: bytes per second as megabits per second (binary mega, as in the thesis). */
    public static double megabitsPerSecond(double bytesPerSecond) {
        return bytesPerSecond * 8.0 / (1024.0 * 1024.0);
    }

    /** Throughput of {@code bytes} carried one way in {@code millis} ms, in Mb/s (the thesis's 84 Mb/s for Table 5.1). */
    public static double megabitsPerSecond(long bytes, double millis) {
        return megabitsPerSecond(bytes / (millis / 1e3));
    }
}
