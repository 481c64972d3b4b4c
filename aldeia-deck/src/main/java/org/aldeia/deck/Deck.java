package org.aldeia.deck;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import java.lang.ref.Reference;
import java.nio.file.Path;

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

    /** Static mode: this process is node {@code id} of {@code nodes}, listed in {@code nodesFile}. */
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

    /** Dynamic mode: what a peer passes to {@link #addPeer} to reach this process. */
    public static String contact() throws DeckException {
        DeckNative.ensureLoaded();
        byte[] buf = new byte[DeckNative.DECK_CONTACT_MAX];
        DeckNative.check("deck_contact", DeckNative.deck_contact(buf, buf.length));
        return Native.toString(buf);
    }

    /** Dynamic mode: makes peer {@code id} reachable at {@code host} with its published contact. */
    public static void addPeer(int id, String host, String contact) throws DeckException {
        DeckNative.ensureLoaded();
        DeckNative.check("deck_add_peer", DeckNative.deck_add_peer(id, host, contact));
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
