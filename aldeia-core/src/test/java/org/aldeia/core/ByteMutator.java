package org.aldeia.core;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.aldeia.core.bootstrap.BootstrapProtocol;

/**
 * The mutations of {@link SeededFuzzer}: what libFuzzer's mutator does to a byte string without
 * coverage feedback (bit flips, random and boundary bytes and 32-bit integers, inserted,
 * erased, duplicated and spliced ranges), seeded, so a run is repeated exactly by its seed.
 */
final class ByteMutator {

    /** 32-bit values that sit on the bootstrap's bounds (big-endian on the wire). */
    private static final int[] INTERESTING_INTS = {0, 1, 2, -1, 0x7fffffff, 0x80000000, 63, 64, 65, 76, 96, 112,
        4095, 4096, 4097, BootstrapProtocol.MAX_HELLO_LENGTH, BootstrapProtocol.MAX_HELLO_LENGTH + 1,
        BootstrapProtocol.MAX_REPLY_LENGTH, BootstrapProtocol.MAX_REPLY_LENGTH + 1, BootstrapProtocol.MAGIC,
        BootstrapProtocol.VERSION, 1 << 24};
    private static final byte[] INTERESTING_BYTES = {0, 1, 2, 0x7f, (byte) 0x80, (byte) 0xff};

    private final Random random;
    private final int maxLength;

    ByteMutator(long seed, int maxLength) {
        this.random = new Random(seed);
        this.maxLength = maxLength;
    }

    /** One to eight mutations of {@code input}, the others available for splicing. */
    byte[] mutate(byte[] input, List<byte[]> others) {
        byte[] out = input.clone();
        int rounds = 1 + random.nextInt(8);
        for (int i = 0; i < rounds; i++) {
            out = once(out, others);
        }
        return out.length > maxLength ? Arrays.copyOf(out, maxLength) : out;
    }

    int nextInt(int bound) {
        return random.nextInt(bound);
    }

    private byte[] once(byte[] in, List<byte[]> others) {
        switch (random.nextInt(9)) {
            case 0: // flip a bit
                if (in.length > 0) {
                    in[random.nextInt(in.length)] ^= (byte) (1 << random.nextInt(8));
                }
                return in;
            case 1: // a random byte
                if (in.length > 0) {
                    in[random.nextInt(in.length)] = (byte) random.nextInt(256);
                }
                return in;
            case 2: // a boundary byte
                if (in.length > 0) {
                    in[random.nextInt(in.length)] = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)];
                }
                return in;
            case 3: // a boundary integer, where a length or a magic number may be
                if (in.length >= 4) {
                    int at = random.nextInt(in.length - 3), value = INTERESTING_INTS[random.nextInt(INTERESTING_INTS.length)];
                    for (int b = 0; b < 4; b++) {
                        in[at + b] = (byte) (value >>> (24 - 8 * b));
                    }
                }
                return in;
            case 4: // insert random bytes
                return insert(in, random.nextInt(in.length + 1), randomBytes(1 + random.nextInt(16)));
            case 5: // erase a range
                return in.length == 0 ? in : erase(in);
            case 6: // duplicate a range
                return in.length == 0 ? in : insert(in, random.nextInt(in.length + 1), range(in));
            case 7: // cut the end off
                return Arrays.copyOf(in, in.length == 0 ? 0 : random.nextInt(in.length));
            default: // this one's start, another's end
                byte[] other = others.get(random.nextInt(others.size()));
                int cut = random.nextInt(in.length + 1), from = random.nextInt(other.length + 1);
                return concat(Arrays.copyOf(in, cut), Arrays.copyOfRange(other, from, other.length));
        }
    }

    private byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private byte[] range(byte[] in) {
        int from = random.nextInt(in.length);
        return Arrays.copyOfRange(in, from, from + 1 + random.nextInt(Math.min(64, in.length - from)));
    }

    private byte[] erase(byte[] in) {
        int from = random.nextInt(in.length), n = 1 + random.nextInt(Math.min(64, in.length - from));
        return concat(Arrays.copyOf(in, from), Arrays.copyOfRange(in, from + n, in.length));
    }

    private static byte[] insert(byte[] in, int at, byte[] what) {
        return concat(concat(Arrays.copyOf(in, at), what), Arrays.copyOfRange(in, at, in.length));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
