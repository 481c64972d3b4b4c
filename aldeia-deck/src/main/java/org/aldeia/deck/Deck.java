package org.aldeia.deck;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The DECK environment of this process (one process is one DECK node). Start it once with one
 * of the {@code init} methods, stop it with {@link #done()}.
 */
public final class Deck {

    private static final int DESCRIPTION_MAX = 512;

    /** Environment variables deckrun (and {@link DeckLauncher}) set for static mode. */
    public static final String ENV_ID = "DECK_ID";
    public static final String ENV_NODES = "DECK_NODES";
    public static final String ENV_FILE = "DECK_FILE";
    /** The run secret of a static run: a file of random bytes, mode 0600 (deckrun makes one). */
    public static final String ENV_SECRET_FILE = "DECK_SECRET_FILE";
    /** Bytes of a pair key ({@link #addPeer}, {@link #peerKey}). */
    public static final int KEY_BYTES = 32;

    private Deck() {
    }

    /**
     * Static mode as deckrun starts it: the options {@code -deck_id N -deck_nodes N -deck_file F}
     * in {@code args}, or else DECK_ID / DECK_NODES / DECK_FILE from the environment.
     *
     * @return {@code args} without the DECK options
     */
    public static String[] init(String... args) throws DeckException {
        DeckNative.ensureLoaded();
        String[] argvWithName = new String[args.length + 1];
        argvWithName[0] = "java";
        System.arraycopy(args, 0, argvWithName, 1, args.length);
        StringArray argv = new StringArray(argvWithName); // NULL-terminated char *[]
        Memory argc = new Memory(Integer.BYTES);
        argc.setInt(0, argvWithName.length);
        Memory argvRef = new Memory(Native.POINTER_SIZE);
        argvRef.setPointer(0, argv);
        DeckNative.check("deck_init", DeckNative.deck_init(argc, argvRef));
        // deck_init removes its options by rewriting argc/argv: read back what is left.
        Pointer[] left = argvRef.getPointer(0).getPointerArray(0, argc.getInt(0));
        String[] remaining = new String[left.length - 1];
        for (int i = 1; i < left.length; i++) {
            remaining[i - 1] = left[i].getString(0);
        }
        Reference.reachabilityFence(argv); // its native strings must outlive the reads above
        return remaining;
    }

    /**
     * The run secret the static inits of this process read from now on, instead of the
     * environment's DECK_SECRET_FILE that deckrun sets: a file of random bytes, mode 0600 (see
     * {@link DeckLauncher#writeRunSecret}); {@code null}: DECK_SECRET_FILE again.
     */
    public static void useSecretFile(Path secretFile) throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_set_secret_file",
                DeckNative.deck_set_secret_file(secretFile == null ? null : secretFile.toString()));
    }

    /**
     * Static mode: this process is node {@code id} of {@code nodes}, listed in {@code nodesFile};
     * the run secret is DECK_SECRET_FILE's, or the file given to {@link #useSecretFile}.
     */
    public static void initStatic(int id, int nodes, Path nodesFile) throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_init_static", DeckNative.deck_init_static(id, nodes, nodesFile.toString()));
    }

    /** Dynamic mode: this process gets an id of its own; peers are added by {@link #addPeer}. */
    public static void initDynamic() throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_init_dynamic", DeckNative.deck_init_dynamic());
    }

    /** Tears the environment down; mailboxes and messages must be closed before. */
    public static void done() throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_done", DeckNative.deck_done());
    }

    public static boolean isInitialized() {
        DeckNative.ensureLoaded();
        return DeckNative.deck_is_initialized() != 0;
    }

    /** This process's DECK id. */
    public static int node() throws DeckException {
        DeckNative.ensureLoaded();
        return DeckNative.check("deck_node", DeckNative.deck_node());
    }

    /** Static mode: N; dynamic mode: 1 + the peers added so far. */
    public static int numNodes() throws DeckException {
        DeckNative.ensureLoaded();
        return DeckNative.check("deck_numnodes", DeckNative.deck_numnodes());
    }

    /** Static mode: waits until every process of the run reaches the barrier. */
    public static void barrier() throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_barrier", DeckNative.deck_barrier());
    }

    /**
     * Dynamic mode: what this process tells a peer it connects to (the client side of a
     * bootstrap): {@code shm=<boot id>.<node>.<nonce>} when it offers shared memory, else
     * {@code tcp}: it listens on nothing, and is reached over the connection it opens.
     */
    public static String contact() throws DeckException {
        DeckNative.ensureLoaded();
        byte[] buf = new byte[DeckNative.DECK_CONTACT_MAX];
        DeckNative.check("deck_contact", DeckNative.deck_contact(buf, buf.length));
        return Native.toString(buf);
    }

    /**
     * Dynamic mode: what this process tells the peer whose {@link #contact()} is
     * {@code peerContact} and whose bootstrap arrived on this host's {@code localAddress} (the
     * server side): its shared memory when that peer will be reached through it, else
     * {@code port=N} of a tcp port on {@code localAddress}, bound now if needed and listened on once
     * a peer reached over tcp is added. A contact that names a port or a host is not a client's
     * and is refused.
     */
    public static String contactFor(String peerContact, String localAddress) throws DeckException {
        DeckNative.ensureLoaded();
        byte[] buf = new byte[DeckNative.DECK_CONTACT_MAX];
        DeckNative.check("deck_contact_for", DeckNative.deck_contact_for(peerContact, localAddress, buf, buf.length));
        return Native.toString(buf);
    }

    /**
     * Dynamic mode: makes peer {@code id} reachable at {@code host} with the contact it gave,
     * proving itself (and this process to it) on every connection with {@code key}, the
     * {@link #KEY_BYTES} bytes the bootstrap of their first connection agreed. A second call
     * for {@code id} must give the same key (else a DeckException: another process claims the id).
     */
    public static void addPeer(int id, String host, String contact, byte[] key) throws DeckException {
        DeckNative.ensureLoaded();
        checkKey(key);
        DeckNative.check("deck_add_peer", DeckNative.deck_add_peer(id, host, contact, key));
    }

    /**
     * The key this process and {@code id} prove themselves with: the run key in a static run,
     * the key given to {@link #addPeer} in a dynamic one, this process's own random key for its
     * own id; empty when {@code id} was never introduced.
     */
    public static Optional<byte[]> peerKey(int id) throws DeckException {
        DeckNative.ensureLoaded();
        byte[] key = new byte[KEY_BYTES];
        int rc = DeckNative.deck_peer_key(id, key);
        if (rc == DeckNative.DECK_ENOTFOUND) {
            return Optional.empty();
        }
        DeckNative.check("deck_peer_key", rc);
        return Optional.of(key);
    }

    private static void checkKey(byte[] key) {
        if (key == null || key.length != KEY_BYTES) {
            throw new IllegalArgumentException("a DECK key has " + KEY_BYTES + " bytes, not "
                    + (key == null ? "none" : Integer.toString(key.length)));
        }
    }

    /**
     * How peer {@code id} is reached: in a dynamic run, e.g. "sci (same host: shared memory,
     * node 3)" or "tcp (another host)"; in a static run, the transport's name.
     */
    public static String describePeer(int id) throws DeckException {
        DeckNative.ensureLoaded();
        byte[] buf = new byte[DESCRIPTION_MAX];
        DeckNative.check("deck_peer_describe", DeckNative.deck_peer_describe(id, buf, buf.length));
        return Native.toString(buf);
    }
}
