package org.aldeia.deck;

import java.util.Arrays;

/**
 * One process of a two-node static DECK run (started by StaticRunTest through DeckLauncher).
 * Node 0 posts MESSAGES messages of every Java type and varied sizes (a few far larger than a
 * socket buffer) to node 1, all before reading any reply; node 1 checks each one and posts it
 * back; node 0 checks the echoes. Exits 0 only if every message arrived intact and in order.
 */
public final class StaticExchangeMain {

    static final int MESSAGES = 1000;
    private static final int LARGE = 200_000;

    private StaticExchangeMain() {
    }

    public static void main(String[] args) {
        try {
            run(args);
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        String[] rest = Deck.init(args);
        if (rest.length != 0 || Deck.numNodes() != 2) {
            throw new IllegalStateException("expected a 2-node run and no arguments: " + Arrays.toString(rest));
        }
        int me = Deck.node();
        int peer = 1 - me;
        try (Mailbox inbox = Mailbox.create("inbox-" + me);
                Mailbox outbox = Mailbox.clone("inbox-" + peer);
                Message message = Message.create(LARGE + 1024)) {
            inbox.watch(peer); // a dead peer fails the retrieve instead of hanging it
            if (me == 0) {
                for (int i = 0; i < MESSAGES; i++) {
                    fill(message, i);
                    outbox.post(message);
                }
                for (int i = 0; i < MESSAGES; i++) {
                    inbox.retrieve(message);
                    verify(message, i);
                }
            } else {
                for (int i = 0; i < MESSAGES; i++) {
                    inbox.retrieve(message);
                    verify(message, i);
                    outbox.post(message); // the retrieved message: its length is what arrived
                }
            }
            Deck.barrier();
        }
        Deck.done();
        System.out.println("node " + me + ": " + MESSAGES + " messages verified");
    }

    private static int payloadSize(int i) {
        return i % 100 == 99 ? LARGE : (i * 37) % 2000;
    }

    private static byte payloadByte(int i, int k) {
        return (byte) (i * 31 + k * 7);
    }

    private static void fill(Message m, int i) throws DeckException {
        byte[] payload = new byte[payloadSize(i)];
        for (int k = 0; k < payload.length; k++) {
            payload[k] = payloadByte(i, k);
        }
        m.clear();
        m.pack(new int[] {i, payload.length})
                .pack(new long[] {i * 1_000_003L})
                .pack("message " + i)
                .pack(new short[] {(short) i})
                .pack(new float[] {i / 3f})
                .pack(new double[] {i / 7.0})
                .pack(payload);
    }

    private static void verify(Message m, int i) throws DeckException {
        int[] header = new int[2];
        long[] l = new long[1];
        short[] s = new short[1];
        float[] f = new float[1];
        double[] d = new double[1];
        m.unpack(header);
        expect(header[0] == i, "message " + header[0] + " arrived where " + i + " was due");
        expect(header[1] == payloadSize(i), "message " + i + ": payload size " + header[1]);
        m.unpack(l);
        String text = m.unpackString();
        m.unpack(s);
        m.unpack(f);
        m.unpack(d);
        expect(l[0] == i * 1_000_003L && text.equals("message " + i) && s[0] == (short) i
                && f[0] == i / 3f && d[0] == i / 7.0, "message " + i + ": scalar fields differ");
        byte[] payload = new byte[header[1]];
        m.unpack(payload);
        for (int k = 0; k < payload.length; k++) {
            expect(payload[k] == payloadByte(i, k), "message " + i + ": payload byte " + k + " differs");
        }
        expect(m.length() == 4 + 4 + 8 + 4 + text.length() + 1 + 2 + 4 + 8 + payload.length,
                "message " + i + ": length " + m.length());
    }

    private static void expect(boolean condition, String failure) {
        if (!condition) {
            throw new IllegalStateException(failure);
        }
    }
}
