package org.aldeia.deck;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A DECK message (deck_msg_t): a data area filled by packs and read back by unpacks of the same
 * types in the same order. Java types map to DECK types as byte/DECK_CHAR, short/DECK_SHORT,
 * int/DECK_INT, long/DECK_LONG, float/DECK_FLOAT, double/DECK_DOUBLE, String/DECK_STRING (UTF-8),
 * so a C peer reads what a Java peer packed. Each pack or unpack is one native call whatever the
 * array length. Not thread-safe: one thread fills or drains a message at a time.
 */
public final class Message implements AutoCloseable {

    /* Offsets in deck_msg_t (deck.h, LP64): buf, size, len, pos, impl. */
    private static final long BUF_OFFSET = 0;
    private static final long SIZE_OFFSET = 8;
    private static final long LEN_OFFSET = 16;
    private static final long POS_OFFSET = 24;

    /* The structure lives in JNA memory, freed by JNA once this object is unreachable: a thread
     * still inside a native call on it keeps it alive, so close() never frees it under a user. */
    private final Memory struct;
    private boolean closed;

    private Message(Memory struct) {
        this.struct = struct;
    }

    /** A message able to hold {@code size} packed bytes. */
    public static Message create(long size) throws DeckException {
        if (size < 0) {
            throw new IllegalArgumentException("message size must not be negative: " + size);
        }
        DeckNative.ensureLoaded();
        Memory struct = new Memory(DeckNative.deck_sizeof_msg());
        struct.clear();
        DeckNative.check("deck_msg_create", DeckNative.deck_msg_create(struct, size));
        return new Message(struct);
    }

    public Message pack(byte[] values) throws DeckException {
        return pack(values, 0, values.length);
    }

    public Message pack(byte[] values, int offset, int count) throws DeckException {
        return pack(DeckNative.DECK_CHAR, ByteBuffer.wrap(values, offset, count), count);
    }

    public Message pack(short[] values) throws DeckException {
        return pack(DeckNative.DECK_SHORT, ShortBuffer.wrap(values), values.length);
    }

    public Message pack(int[] values) throws DeckException {
        return pack(DeckNative.DECK_INT, IntBuffer.wrap(values), values.length);
    }

    public Message pack(long[] values) throws DeckException {
        return pack(DeckNative.DECK_LONG, LongBuffer.wrap(values), values.length);
    }

    public Message pack(float[] values) throws DeckException {
        return pack(DeckNative.DECK_FLOAT, FloatBuffer.wrap(values), values.length);
    }

    public Message pack(double[] values) throws DeckException {
        return pack(DeckNative.DECK_DOUBLE, DoubleBuffer.wrap(values), values.length);
    }

    /** Packs {@code value} as one DECK_STRING: its UTF-8 bytes, NUL-terminated. */
    public Message pack(String value) throws DeckException {
        if (value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a DECK_STRING cannot contain the NUL character");
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        ByteBuffer cString = ByteBuffer.allocate(utf8.length + 1).put(utf8).put((byte) 0).flip();
        return pack(DeckNative.DECK_STRING, cString, 1);
    }

    public void unpack(byte[] into) throws DeckException {
        unpack(into, 0, into.length);
    }

    public void unpack(byte[] into, int offset, int count) throws DeckException {
        unpack(DeckNative.DECK_CHAR, ByteBuffer.wrap(into, offset, count), count);
    }

    public void unpack(short[] into) throws DeckException {
        unpack(DeckNative.DECK_SHORT, ShortBuffer.wrap(into), into.length);
    }

    public void unpack(int[] into) throws DeckException {
        unpack(DeckNative.DECK_INT, IntBuffer.wrap(into), into.length);
    }

    public void unpack(long[] into) throws DeckException {
        unpack(DeckNative.DECK_LONG, LongBuffer.wrap(into), into.length);
    }

    public void unpack(float[] into) throws DeckException {
        unpack(DeckNative.DECK_FLOAT, FloatBuffer.wrap(into), into.length);
    }

    public void unpack(double[] into) throws DeckException {
        unpack(DeckNative.DECK_DOUBLE, DoubleBuffer.wrap(into), into.length);
    }

    /** Unpacks one DECK_STRING. */
    public String unpackString() throws DeckException {
        Pointer m = open();
        // deck.h stores a DECK_STRING as a 4-byte length (NUL included) and the bytes: peek at
        // the length to size the buffer; when it is not there, the C call reports why.
        long left = m.getLong(LEN_OFFSET) - m.getLong(POS_OFFSET);
        int declared = left >= Integer.BYTES ? m.getPointer(BUF_OFFSET).getInt(m.getLong(POS_OFFSET)) : 1;
        int capacity = declared >= 1 && declared <= left - Integer.BYTES ? declared : 1;
        byte[] cString = new byte[capacity];
        unpack(DeckNative.DECK_STRING, ByteBuffer.wrap(cString), capacity);
        return new String(cString, 0, capacity - 1, StandardCharsets.UTF_8);
    }

    /** Empties the message for refilling (length and cursor back to 0). */
    public void clear() throws DeckException {
        DeckNative.check("deck_msg_clear", DeckNative.deck_msg_clear(open()));
    }

    /** Rewinds the unpack cursor to read the message again. */
    public void reset() throws DeckException {
        DeckNative.check("deck_msg_reset", DeckNative.deck_msg_reset(open()));
    }

    /** Bytes packed (or received). */
    public long length() {
        return open().getLong(LEN_OFFSET);
    }

    /** Bytes the message can hold. */
    public long capacity() {
        return open().getLong(SIZE_OFFSET);
    }

    /**
     * The whole data area ({@link #capacity()} bytes) as a direct buffer, for filling or reading
     * in place; after filling it, declare how much is valid with {@link #setLength}. Valid only
     * until {@link #close()}.
     */
    public ByteBuffer buffer() throws DeckException {
        long[] address = new long[1];
        DeckNative.check("deck_msg_getbuffer", DeckNative.deck_msg_getbuffer(open(), address));
        return new Pointer(address[0]).getByteBuffer(0, capacity());
    }

    /** Sets the packed length after filling {@link #buffer()} directly. */
    public void setLength(long length) throws DeckException {
        DeckNative.check("deck_msg_setlength", DeckNative.deck_msg_setlength(open(), length));
    }

    /** Destroys the native message; further use throws IllegalStateException. Idempotent. */
    @Override
    public void close() throws DeckException {
        if (!closed) {
            closed = true;
            DeckNative.check("deck_msg_destroy", DeckNative.deck_msg_destroy(struct));
        }
    }

    /** The deck_msg_t, for the mailbox calls. */
    Pointer open() {
        if (closed) {
            throw new IllegalStateException("message is closed");
        }
        return struct;
    }

    private Message pack(int type, Buffer values, int count) throws DeckException {
        DeckNative.check("deck_msg_pack", DeckNative.deck_msg_pack(open(), type, values, count));
        return this;
    }

    private void unpack(int type, Buffer into, int count) throws DeckException {
        DeckNative.check("deck_msg_unpack", DeckNative.deck_msg_unpack(open(), type, into, count));
    }
}
