package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SizesTest {

    @Test
    void binarySizesInKibAndMibDecimalOnesInKbAndMbTheRestInBytes() {
        assertEquals("1 B", Sizes.label(1));
        assertEquals("64 B", Sizes.label(64));
        assertEquals("1 KiB", Sizes.label(1024));
        assertEquals("64 KiB", Sizes.label(64 * 1024));
        assertEquals("1 MiB", Sizes.label(1 << 20));
        assertEquals("10 kB", Sizes.label(10_000));
        assertEquals("1 MB", Sizes.label(1_000_000));
        assertEquals("1500 B", Sizes.label(1500));
        assertEquals("70001 B", Sizes.label(70_001));
    }
}
