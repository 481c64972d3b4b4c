package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.spy;
import static org.mockito.Mockito.verify;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Copies between a registered region and a byte[] take one of two paths by size (the direct
 * view, or JNI for big blocks): both must move the same bytes to and from the same place.
 */
class RegisteredRegionTest {

    private static final int SIZE = 1 << 18;
    private final FakeVapi vapi = new FakeVapi();
    private RegisteredRegion region;

    @BeforeEach
    void register() throws Exception {
        region = RegisteredRegion.register(vapi, 1, 1, SIZE);
        view().put(0, new byte[SIZE]);   // malloc'd: zero it, so "around" can be checked
    }

    @AfterEach
    void release() throws Exception {
        region.release(vapi, 1);
    }

    /** The region's memory seen through a direct buffer of its own, a path put and get do not share. */
    private ByteBuffer view() {
        return new Pointer(region.address()).getByteBuffer(0, SIZE);
    }

    /** malloc puts a large block 16 bytes past a page boundary: the region must not start there. */
    @ParameterizedTest
    @ValueSource(ints = {1, 100, 65536, 1 << 20})
    void theRegionStartsOnACacheLineAndIsTheMemoryRegistered(int size) throws Exception {
        Vapi recording = spy(new FakeVapi());
        RegisteredRegion sized = RegisteredRegion.register(recording, 1, 1, size);
        try {
            assertEquals(0, sized.address() % RegisteredRegion.ALIGN, "address " + Long.toHexString(sized.address()));
            verify(recording).VAPI_register_mr(eq(1L), eq(1L), eq(sized.address()), eq((long) size), any(), any());
            assertEquals(size, sized.size());
        } finally {
            sized.release(recording, 1);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, RegisteredRegion.NATIVE_COPY_FROM - 1, RegisteredRegion.NATIVE_COPY_FROM, 65536, 100_003})
    void bytesPutAtAnOffsetAreTheBytesGotThereAndTheViewShows(int n) {
        int at = 100_000, from = 7;
        byte[] source = new byte[n + from + 5];
        for (int i = 0; i < source.length; i++) {
            source[i] = (byte) (i * 31 + n);
        }
        region.put(at, source, from, n);
        byte[] expected = Arrays.copyOfRange(source, from, from + n);

        byte[] back = new byte[n + 11];
        region.get(at, back, 11, n);
        assertArrayEquals(expected, Arrays.copyOfRange(back, 11, 11 + n));
        assertArrayEquals(new byte[11], Arrays.copyOfRange(back, 0, 11), "nothing written before the offset");

        ByteBuffer view = view();
        byte[] seen = new byte[n + 2];
        view.get(at - 1, seen, 0, n + 2);
        assertArrayEquals(expected, Arrays.copyOfRange(seen, 1, n + 1), "the other path sees the same bytes");
        assertArrayEquals(new byte[2], new byte[] {seen[0], seen[n + 1]}, "nothing written around them");
    }
}
