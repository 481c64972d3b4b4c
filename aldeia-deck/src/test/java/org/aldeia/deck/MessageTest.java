package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Pack/unpack through the real libdeck.so; messages need no DECK environment. */
class MessageTest {

    @Test
    void everyJavaTypeRoundTripsInPackOrder() throws Exception {
        byte[] bytes = {0, 1, -1, Byte.MIN_VALUE, Byte.MAX_VALUE};
        short[] shorts = {0, -2, Short.MIN_VALUE, Short.MAX_VALUE};
        int[] ints = {7, -7, Integer.MIN_VALUE, Integer.MAX_VALUE};
        long[] longs = {1L << 40, -3, Long.MIN_VALUE, Long.MAX_VALUE};
        float[] floats = {1.5f, -0.0f, Float.NaN, Float.MAX_VALUE};
        double[] doubles = {Math.PI, Double.MIN_VALUE, Double.NEGATIVE_INFINITY};
        String text = "mailbox ação 箱 \uD83D\uDCEC";
        try (Message m = Message.create(1024)) {
            m.pack(bytes).pack(shorts).pack(ints).pack(text).pack(longs).pack(floats).pack(doubles).pack("");

            byte[] b = new byte[bytes.length];
            short[] s = new short[shorts.length];
            int[] i = new int[ints.length];
            long[] l = new long[longs.length];
            float[] f = new float[floats.length];
            double[] d = new double[doubles.length];
            m.unpack(b);
            m.unpack(s);
            m.unpack(i);
            assertEquals(text, m.unpackString());
            m.unpack(l);
            m.unpack(f);
            m.unpack(d);
            assertEquals("", m.unpackString());

            assertArrayEquals(bytes, b);
            assertArrayEquals(shorts, s);
            assertArrayEquals(ints, i);
            assertArrayEquals(longs, l);
            assertArrayEquals(floats, f);
            assertArrayEquals(doubles, d);
        }
    }

    @Test
    void packedLengthIsTheNativeSizeOfEachItem() throws Exception {
        try (Message m = Message.create(100)) {
            m.pack(new byte[3]).pack(new short[2]).pack(new int[2]).pack(new long[1]).pack(new double[1]).pack("ab");
            assertEquals(3 + 2 * 2 + 2 * 4 + 8 + 8 + (4 + 3), m.length());
            assertEquals(100, m.capacity());
        }
    }

    @Test
    void byteRangesPackAndUnpackAtTheirOffset() throws Exception {
        byte[] source = {10, 11, 12, 13, 14, 15};
        byte[] target = new byte[6];
        try (Message m = Message.create(16)) {
            m.pack(source, 2, 3);
            assertEquals(3, m.length());
            m.unpack(target, 1, 3);
        }
        assertArrayEquals(new byte[] {0, 12, 13, 14, 0, 0}, target);
    }

    @Test
    void unpackPastTheEndNamesFunctionAndCode() throws Exception {
        try (Message m = Message.create(64)) {
            m.pack(new int[] {42});
            DeckException e = assertThrows(DeckException.class, () -> m.unpack(new long[1]));
            assertEquals("deck_msg_unpack", e.function());
            assertEquals(-9, e.code());
            assertTrue(e.getMessage().contains("deck_msg_unpack"), e.getMessage());
            assertTrue(e.getMessage().contains("DECK_ERANGE"), e.getMessage());
            // All or nothing: the failed unpack did not move the cursor.
            int[] again = new int[1];
            m.unpack(again);
            assertEquals(42, again[0]);
            assertThrows(DeckException.class, m::unpackString);
        }
    }

    @Test
    void packPastTheCapacityFailsWithRange() throws Exception {
        try (Message m = Message.create(8)) {
            m.pack(new int[2]);
            DeckException e = assertThrows(DeckException.class, () -> m.pack(new byte[1]));
            assertEquals("deck_msg_pack", e.function());
            assertTrue(e.getMessage().contains("DECK_ERANGE"), e.getMessage());
            assertEquals(8, m.length());
        }
    }

    @Test
    void clearEmptiesAndResetRewinds() throws Exception {
        try (Message m = Message.create(32)) {
            m.pack(new int[] {1, 2});
            int[] out = new int[2];
            m.unpack(out);
            m.reset();
            m.unpack(out);
            assertArrayEquals(new int[] {1, 2}, out);
            m.clear();
            assertEquals(0, m.length());
            assertThrows(DeckException.class, () -> m.unpack(new int[1]));
            m.pack(new int[] {3});
            int[] one = new int[1];
            m.unpack(one);
            assertEquals(3, one[0]);
        }
    }

    @Test
    void bufferGivesDirectAccessToTheDataArea() throws Exception {
        try (Message m = Message.create(16)) {
            m.pack(new int[] {0x01020304});
            ByteBuffer data = m.buffer().order(ByteOrder.nativeOrder());
            assertTrue(data.isDirect());
            assertEquals(16, data.capacity());
            assertEquals(0x01020304, data.getInt(0));

            data.putLong(0, 77L).putLong(8, -5L);
            m.setLength(16);
            long[] out = new long[2];
            m.unpack(out);
            assertArrayEquals(new long[] {77L, -5L}, out);
            DeckException e = assertThrows(DeckException.class, () -> m.setLength(17));
            assertEquals("deck_msg_setlength", e.function());
        }
    }

    @Test
    void aClosedMessageRefusesUseAndClosesOnce() throws Exception {
        Message m = Message.create(8);
        m.close();
        m.close();
        assertThrows(IllegalStateException.class, () -> m.pack(new byte[1]));
        assertThrows(IllegalStateException.class, m::length);
    }

    @Test
    void stringsWithNulOrNegativeSizesAreRejectedBeforeNativeCode() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> Message.create(-1));
        try (Message m = Message.create(8)) {
            assertThrows(IllegalArgumentException.class, () -> m.pack("a\0b"));
            assertEquals(0, m.length());
        }
    }
}
