package org.aldeia.deck;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One process of a two-process dynamic DECK run, driven by DynamicRunTest over stdin/stdout as a
 * bootstrap would introduce them: the client (argument "client") prints "PEER id contact" and
 * reads the server's line; the server reads the client's line and prints "PEER id contactFor";
 * each adds the other with the pair key given in hex as the second argument, they exchange one
 * message, print "RECEIVED id" and wait for "EXIT" before tearing DECK down (so that neither
 * leaves while the other still needs it).
 */
public final class DynamicPeerMain {

    static final int VALUES = 1000;

    private DynamicPeerMain() {
    }

    public static void main(String[] args) {
        try {
            run("server".equals(args[0]), HexFormat.of().parseHex(args[1]));
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(boolean server, byte[] key) throws Exception {
        BufferedReader parent = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Deck.initDynamic();
        int me = Deck.node();
        if (!server) {
            System.out.println("PEER " + me + " " + Deck.contact());
            System.out.flush();
        }
        String[] peerLine = parent.readLine().split(" ", 3);
        int peer = Integer.parseInt(peerLine[1]);
        if (server) {
            System.out.println("PEER " + me + " " + Deck.contactFor(peerLine[2], "127.0.0.1"));
            System.out.flush();
        }
        if (Deck.peerKey(peer).isPresent()) {
            throw new IllegalStateException("a key for peer " + peer + " before it was introduced");
        }
        Deck.addPeer(peer, "127.0.0.1", peerLine[2], key);
        if (!Arrays.equals(key, Deck.peerKey(peer).orElseThrow())) {
            throw new IllegalStateException("peer " + peer + " is not known under the key it was added with");
        }
        if (Deck.numNodes() != 2) {
            throw new IllegalStateException("numNodes " + Deck.numNodes() + " after adding one peer");
        }
        try (Mailbox inbox = Mailbox.create("dyn-" + me);
                Mailbox outbox = server ? Mailbox.cloneAt(peer, "dyn-" + peer) : Mailbox.clone("dyn-" + peer);
                Message message = Message.create(16 + VALUES * Long.BYTES)) {
            inbox.watch(peer);
            outbox.post(message.pack(new int[] {me}).pack(values(me)));
            message.clear();
            inbox.retrieve(message);
            int[] from = new int[1];
            long[] got = new long[VALUES];
            message.unpack(from);
            message.unpack(got);
            if (from[0] != peer || !Arrays.equals(got, values(peer))) {
                throw new IllegalStateException("message from " + from[0] + " is not what peer " + peer + " sent");
            }
            System.out.println("RECEIVED " + from[0]);
            System.out.flush();
            if (!"EXIT".equals(parent.readLine())) {
                throw new IllegalStateException("expected EXIT from the test");
            }
        }
        Deck.done();
    }

    private static long[] values(int id) {
        long[] values = new long[VALUES];
        for (int i = 0; i < VALUES; i++) {
            values[i] = (long) id * i;
        }
        return values;
    }
}
