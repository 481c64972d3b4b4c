package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class SizesTest {

    @Test
    void thesisSweepIsZeroToTenThousandInclusive() {
        List<Integer> sizes = Sizes.parse("0:10000:500");
        assertEquals(21, sizes.size());
        assertEquals(0, sizes.get(0));
        assertEquals(500, sizes.get(1));
        assertEquals(10000, sizes.get(20));
    }

    @Test
    void listsMixSizesAndRanges() {
        assertEquals(List.of(1, 0, 4, 8, 65536), Sizes.parse("1, 0:8:4,65536"));
        assertTrue(Sizes.parse(" ").isEmpty());
    }

    @Test
    void badItemsNameTheOffendingText() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1,x")).getMessage().contains("'x'"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("-5"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("10:0:1"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("0:10:0"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("0:10"));
    }

    @Test
    void describesWholeBinaryUnits() {
        assertEquals("1 B", Sizes.describe(1));
        assertEquals("1000 B", Sizes.describe(1000));
        assertEquals("10 KiB", Sizes.describe(10240));
        assertEquals("1 MiB", Sizes.describe(1 << 20));
    }
}
