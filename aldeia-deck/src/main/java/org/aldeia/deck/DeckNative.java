package org.aldeia.deck;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.Buffer;

/**
 * JNA direct mapping of native-c/include/deck.h (libdeck.so). Direct mapping keeps each call a
 * single JNI crossing. The raw functions are package-private: the public API is {@link Deck},
 * {@link Message} and {@link Mailbox}, which turn error codes into {@link DeckException}s.
 *
 * <p>The DECK thread wrappers (deck_thread_*, deck_mutex_*, deck_cond_*, deck_sema_*) are not
 * mapped: Java code uses Java threads and java.util.concurrent, which DECK calls tolerate from
 * any thread.
 */
public final class DeckNative {

    /* enum deck_type of deck.h */
    static final int DECK_CHAR = 1;
    static final int DECK_SHORT = 3;
    static final int DECK_INT = 5;
    static final int DECK_LONG = 7;
    static final int DECK_FLOAT = 9;
    static final int DECK_DOUBLE = 10;
    static final int DECK_STRING = 12;

    static final int DECK_ENOTFOUND = -4;
    static final int DECK_ETIMEDOUT = -11;
    static final int DECK_CONTACT_MAX = 256;
    static final int DECK_KEY_BYTES = 32;
    /** deck_mbox_watch: admits no other process until watched for one. */
    static final int DECK_NOBODY = -2;

    private static final NativeLibrary LIBRARY;
    /* Why loading failed, rethrown (as a fresh exception) on first use rather than as an
     * ExceptionInInitializerError, which would hide the reason behind NoClassDefFoundError. */
    private static final DeckLibraryMissing LOAD_FAILURE;

    static {
        NativeLibrary library = null;
        DeckLibraryMissing failure = null;
        try {
            library = DeckLibraries.load("deck");
            Native.register(DeckNative.class, library);
            deck_set_log(DeckLog.LINE);
        } catch (DeckLibraryMissing e) {
            failure = e;
        } catch (UnsatisfiedLinkError e) {
            failure = new DeckLibraryMissing("Native library " + library.getFile()
                    + " does not provide every function of deck.h: " + e.getMessage(), e);
        }
        LIBRARY = library;
        LOAD_FAILURE = failure;
    }

    private DeckNative() {
    }

    /**
     * libdeck.so as loaded by JNA. Load it before any library that depends on it (see
     * {@link DeckLibraries#loadAfterDeck}).
     *
     * @throws DeckLibraryMissing if it could not be loaded
     */
    public static NativeLibrary library() {
        ensureLoaded();
        return LIBRARY;
    }

    /** Throws the load failure, if any; every entry point of the API calls this first. */
    static void ensureLoaded() {
        if (LOAD_FAILURE != null) {
            throw new DeckLibraryMissing(LOAD_FAILURE.getMessage(), LOAD_FAILURE);
        }
    }

    /** Returns {@code rc} if it is not negative, otherwise throws the error it stands for. */
    static int check(String function, int rc) throws DeckException {
        if (rc < 0) {
            throw new DeckException(function, rc, deck_strerror(rc), deck_last_error());
        }
        return rc;
    }

    static native String deck_strerror(int code);
    static native String deck_last_error();

    static native int deck_init(Pointer argc, Pointer argv);
    static native int deck_init_static(int id, int nnodes, String nodesFile);
    static native int deck_set_secret_file(String path);
    static native int deck_init_dynamic();
    static native int deck_done();
    static native int deck_node();
    static native int deck_numnodes();
    static native int deck_barrier();
    static native int deck_is_initialized();
    static native int deck_contact(byte[] buf, long len);
    static native int deck_contact_for(String peerContact, String localAddress, byte[] buf, long len);
    static native int deck_add_peer(int id, String host, String contact, byte[] key);
    static native int deck_peer_key(int id, byte[] key);
    static native int deck_peer_describe(int id, byte[] buf, long len);
    static native void deck_set_log(DeckLog.Line line);

    static native int deck_msg_create(Pointer m, long size);
    /* Array-backed or direct buffers: JNA passes the address of the buffer's position. */
    static native int deck_msg_pack(Pointer m, int type, Buffer datum, int n);
    static native int deck_msg_unpack(Pointer m, int type, Buffer datum, int n);
    static native int deck_msg_clear(Pointer m);
    static native int deck_msg_reset(Pointer m);
    static native int deck_msg_getbuffer(Pointer m, long[] buffer);
    static native int deck_msg_setlength(Pointer m, long len);
    static native int deck_msg_destroy(Pointer m);

    static native int deck_mbox_create(Pointer mb, String name);
    static native int deck_mbox_clone(Pointer mb, String name);
    static native int deck_mbox_clone_at(Pointer mb, int node, String name);
    static native int deck_mbox_limit(Pointer mb, long maxLength);
    static native int deck_mbox_post(Pointer mb, Pointer msg);
    static native int deck_mbox_retrv(Pointer mb, Pointer msg);
    static native int deck_mbox_retrv_timed(Pointer mb, Pointer msg, int timeoutMs);
    static native int deck_mbox_watch(Pointer mb, int node);
    static native int deck_mbox_destroy(Pointer mb);

    static native long deck_sizeof_msg();
    static native long deck_sizeof_mbox();
}
