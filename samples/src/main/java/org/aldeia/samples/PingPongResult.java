package org.aldeia.samples;

/** One size of a ping-pong run: {@code iterations} round trips of {@code size} bytes took {@code totalMillis} (t_c). */
record PingPongResult(int size, int iterations, double totalMillis) {

    static final String CSV_HEADER = "size,iterations,total_ms";

    /** Thesis equation 5.2. */
    double oneWayMicros() {
        return ThesisFormulas.oneWayMicros(totalMillis, iterations);
    }

    /** Thesis equations 5.3 to 5.5. */
    double megabitsPerSecond() {
        return ThesisFormulas.megabitsPerSecond(ThesisFormulas.bytesPerSecond(size, iterations, totalMillis));
    }

    String toCsv() {
        return size + "," + iterations + "," + totalMillis;
    }

    static PingPongResult fromCsv(String line) {
        String[] fields = line.split(",");
        if (fields.length != 3) {
            throw new IllegalArgumentException("not a ping-pong result line: '" + line + "'");
        }
        return new PingPongResult(Integer.parseInt(fields[0]), Integer.parseInt(fields[1]),
                Double.parseDouble(fields[2]));
    }
}
