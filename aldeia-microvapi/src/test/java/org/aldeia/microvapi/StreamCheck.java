package org.aldeia.microvapi;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.BooleanSupplier;

/**
 * Self-checking byte streams for the end-to-end tests. A sender writes {@code total} bytes of
 * seeded content with a seeded mix of write calls (empty, small, around the default MTU of
 * 1024, single-byte {@code write(int)}, up to 4 MiB), then the SHA-256 of what it wrote. A
 * receiver reads with its own mix of calls (single-byte {@code read()}, {@code read(b, off,
 * len)} at odd offsets, sizes up to 2 MiB), computes the SHA-256 of what it read and compares
 * it with the sender's trailer: a lost, duplicated, reordered or corrupted byte fails it.
 */
final class StreamCheck {

    static final int DIGEST_LENGTH = 32;
    private static final int MTU = 1024;
    private static final int[] AROUND_MTU = {MTU - 1, MTU, MTU + 1, 2 * MTU - 1, 2 * MTU, 2 * MTU + 1};
    private static final int MAX_WRITE = 4 << 20;
    private static final int MAX_READ = 2 << 20;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private StreamCheck() {
    }

    /**
     * Byte {@code position} of stream {@code seed} into {@code b[off..off+len)}: content depends on
     * the position only, so a reader can tell which bytes it should see at any offset.
     */
    static void content(long seed, long position, byte[] b, int off, int len) {
        for (int i = 0; i < len; i++) {
            long p = position + i;
            b[off + i] = (byte) (mix(seed + (p >>> 3) * GOLDEN) >>> ((p & 7) << 3));
        }
    }

    /** SplitMix64's finaliser: cheap, and every input bit changes every output byte. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Writes stream {@code seed} with a seeded mix of write calls, then its digest; returns the digest. */
    static byte[] send(OutputStream out, long seed, long total) throws IOException {
        MessageDigest sha = sha256();
        Random calls = new Random(seed);
        byte[] buffer = new byte[MAX_WRITE + 8];
        long sent = 0;
        while (sent < total) {
            int roll = calls.nextInt(100);
            if (roll < 10) {
                content(seed, sent, buffer, 0, 1);
                out.write(buffer[0]);
                sha.update(buffer[0]);
                sent++;
                continue;
            }
            int size = (int) Math.min(total - sent, writeSize(calls, roll));
            int off = calls.nextInt(8);
            content(seed, sent, buffer, off, size);
            out.write(buffer, off, size);
            sha.update(buffer, off, size);
            sent += size;
        }
        byte[] digest = sha.digest();
        out.write(digest);
        return digest;
    }

    /**
     * Writes stream {@code seed} in blocks of up to 64 KiB until {@code stop} says so (looked at
     * between blocks), then ends the output (shutdownOutput); returns how many bytes it wrote.
     */
    static long sendUntil(Socket socket, long seed, BooleanSupplier stop) throws IOException {
        OutputStream out = socket.getOutputStream();
        Random sizes = new Random(seed);
        byte[] block = new byte[64 << 10];
        long sent = 0;
        while (!stop.getAsBoolean()) {
            int size = 1 + sizes.nextInt(block.length);
            content(seed, sent, block, 0, size);
            out.write(block, 0, size);
            sent += size;
        }
        out.flush();
        socket.shutdownOutput();
        return sent;
    }

    /**
     * Reads stream {@code seed} until its end, checking every byte against its position;
     * returns how many bytes it read.
     *
     * @throws IOException at the first byte that is not the stream's, naming its position
     */
    static long verifyUntilEnd(InputStream in, long seed) throws IOException {
        byte[] got = new byte[64 << 10], want = new byte[got.length];
        long received = 0;
        for (int n; (n = in.read(got)) >= 0; received += n) {
            content(seed, received, want, 0, n);
            if (!Arrays.equals(got, 0, n, want, 0, n)) {
                int at = Arrays.mismatch(got, 0, n, want, 0, n);
                throw new IOException("byte " + (received + at) + " of stream " + seed + " is " + got[at]
                        + ", not " + want[at] + ": the stream was corrupted, reordered or lost bytes");
            }
        }
        return received;
    }

    /** Mostly small writes by count, some on the MTU's edges; most bytes go in large writes. */
    private static int writeSize(Random calls, int roll) {
        if (roll < 45) {
            return calls.nextInt(200); // 0 included: an empty write must be harmless
        }
        if (roll < 65) {
            return AROUND_MTU[calls.nextInt(AROUND_MTU.length)];
        }
        if (roll < 92) {
            return 1 + calls.nextInt(64 << 10);
        }
        return 1 + calls.nextInt(MAX_WRITE);
    }

    /**
     * Reads {@code total} bytes with a mix of read calls seeded by {@code seed}, then the sender's
     * digest; returns the digest of what was read.
     *
     * @throws IOException if the stream ends early or the digests differ
     */
    static byte[] receive(InputStream in, long seed, long total) throws IOException {
        MessageDigest sha = sha256();
        Random calls = new Random(~seed);
        byte[] buffer = new byte[MAX_READ + 8];
        long received = 0;
        while (received < total) {
            int roll = calls.nextInt(100);
            if (roll < 10) {
                int b = in.read();
                if (b < 0) {
                    throw endedEarly(received, total);
                }
                sha.update((byte) b);
                received++;
                continue;
            }
            int want = (int) Math.min(total - received, readSize(calls, roll));
            int off = 1 + 2 * calls.nextInt(4);
            int n = in.read(buffer, off, want);
            if (n < 0) {
                throw endedEarly(received, total);
            }
            if (n == 0) {
                throw new IOException("read(b, " + off + ", " + want + ") returned 0 after " + received + " bytes");
            }
            sha.update(buffer, off, n);
            received += n;
        }
        byte[] digest = sha.digest();
        byte[] trailer = in.readNBytes(DIGEST_LENGTH);
        if (!Arrays.equals(digest, trailer)) {
            throw new IOException("SHA-256 of the " + total + " bytes read is " + hex(digest)
                    + " but the sender's is " + hex(trailer));
        }
        return digest;
    }

    private static int readSize(Random calls, int roll) {
        if (roll < 40) {
            return 1 + calls.nextInt(100);
        }
        if (roll < 60) {
            return AROUND_MTU[calls.nextInt(AROUND_MTU.length)];
        }
        if (roll < 90) {
            return 1 + calls.nextInt(64 << 10);
        }
        return 1 + calls.nextInt(MAX_READ);
    }

    /**
     * Both directions at once on one socket: sends stream {@code sendSeed} from a helper thread
     * while this thread receives the peer's (a send-then-receive on both sides would stall
     * as soon as both sides' unread data filled the receivers). Leaves the socket open.
     */
    static void exchange(Socket socket, long sendSeed, long total) throws IOException, InterruptedException {
        FutureTask<byte[]> sending = new FutureTask<>(() -> send(socket.getOutputStream(), sendSeed, total));
        Thread sender = new Thread(sending, "send-" + sendSeed);
        sender.start();
        try {
            receive(socket.getInputStream(), sendSeed, total);
            sending.get();
        } catch (ExecutionException e) {
            throw new IOException("sending stream " + sendSeed + " failed: " + e.getCause(), e.getCause());
        } catch (IOException e) {
            socket.close(); // wakes the sender if it waits for room the peer will never free
            throw e;
        } finally {
            sender.join();
        }
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    private static EOFException endedEarly(long received, long total) {
        return new EOFException("end of stream after " + received + " of " + total + " bytes");
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
