package org.aldeia.bench;

/** Byte counts as people write them: 1 B, 64 B, 1 KiB, 10 KiB, 1 MiB; and the thesis's decimal 10 kB, 1 MB. */
final class Sizes {

    private Sizes() {
    }

    static String label(long bytes) {
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
            return bytes / (1 << 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return bytes / 1024 + " KiB";
        }
        if (bytes >= 1_000_000 && bytes % 1_000_000 == 0) {
            return bytes / 1_000_000 + " MB";
        }
        if (bytes >= 1000 && bytes % 1000 == 0) {
            return bytes / 1000 + " kB";
        }
        return bytes + " B";
    }
}
