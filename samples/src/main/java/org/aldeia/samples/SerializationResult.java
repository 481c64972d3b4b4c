package org.aldeia.samples;

/** One array size of the serialization benchmark: {@code runs} transfers of {@code int[elements]} took {@code totalMillis}. */
record SerializationResult(int elements, int runs, double totalMillis) {

    static final String CSV_HEADER = "elements,runs,total_ms";

    /** The Table 5.1 figure: milliseconds per transfer. */
    double millisPerRun() {
        return totalMillis / runs;
    }

    /** Payload throughput, counting the array's 4-byte elements only (as the thesis's 84 Mb/s does). */
    double megabitsPerSecond() {
        return ThesisFormulas.megabitsPerSecond((long) elements * Integer.BYTES, millisPerRun());
    }

    String toCsv() {
        return elements + "," + runs + "," + totalMillis;
    }

    static SerializationResult fromCsv(String line) {
        String[] fields = line.split(",");
        if (fields.length != 3) {
            throw new IllegalArgumentException("not a serialization result line: '" + line + "'");
        }
        return new SerializationResult(Integer.parseInt(fields[0]), Integer.parseInt(fields[1]),
                Double.parseDouble(fields[2]));
    }
}
