package org.aldeia.samples;

import java.util.ArrayList;
import java.util.List;

/** Message sizes on the command line and in tables. */
final class Sizes {

    private static final int KIB = 1024;
    private static final int MIB = 1024 * 1024;

    private Sizes() {
    }

    /**
     * Parses a comma-separated list whose items are a size {@code n} or an inclusive range
     * {@code start:end:step}, e.g. {@code 0:10000:500,65536}. An empty text is an empty list.
     */
    static List<Integer> parse(String text) {
        List<Integer> sizes = new ArrayList<>();
        if (text.isBlank()) {
            return sizes;
        }
        for (String item : text.split(",")) {
            String[] parts = item.trim().split(":");
            if (parts.length == 1) {
                sizes.add(nonNegative(parts[0]));
            } else if (parts.length == 3) {
                int start = nonNegative(parts[0]);
                int end = nonNegative(parts[1]);
                int step = nonNegative(parts[2]);
                if (step == 0 || end < start) {
                    throw new IllegalArgumentException("range '" + item + "' needs start <= end and step > 0");
                }
                for (long size = start; size <= end; size += step) {
                    sizes.add((int) size);
                }
            } else {
                throw new IllegalArgumentException("'" + item + "' is neither a size nor start:end:step");
            }
        }
        return sizes;
    }

    /** {@code 512 B}, {@code 10 KiB}, {@code 1 MiB}: whole binary units where the size has one. */
    static String describe(int size) {
        if (size >= MIB && size % MIB == 0) {
            return size / MIB + " MiB";
        }
        if (size >= KIB && size % KIB == 0) {
            return size / KIB + " KiB";
        }
        return size + " B";
    }

    private static int nonNegative(String text) {
        try {
            int value = Integer.parseInt(text.trim());
            if (value >= 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // reported below with the offending text
        }
        throw new IllegalArgumentException("'" + text.trim() + "' is not a size in bytes (0 .. 2^31-1)");
    }
}
