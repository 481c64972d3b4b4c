package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The environment and mailbox API inside this JVM, as a one-node static run. */
class DeckInProcessTest {

    @TempDir
    Path dir;

    /** A static run needs its run secret; these tests start one without deckrun. */
    @BeforeEach
    void runSecret() throws Exception {
        Deck.useSecretFile(DeckLauncher.writeRunSecret(dir.resolve("run.secret")));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (Deck.isInitialized()) {
            Deck.done();
        }
        Deck.useSecretFile(null);
    }

    @Test
    void aRunSecretOthersMayReadIsRefusedNamingTheFile() throws Exception {
        Path secret = DeckLauncher.writeRunSecret(dir.resolve("readable.secret"));
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r--r--"));
        Deck.useSecretFile(secret);
        DeckException e = assertThrows(DeckException.class, this::initOneNode);
        assertTrue(e.getMessage().contains("DECK_ECONFIG") && e.getMessage().contains(secret.toString())
                && e.getMessage().contains("0600"), e.getMessage());
        assertFalse(Deck.isInitialized());
    }

    @Test
    void everyNodeOfAStaticRunHasTheRunKey() throws Exception {
        initOneNode();
        byte[] own = Deck.peerKey(0).orElseThrow();
        assertEquals(Deck.KEY_BYTES, own.length);
        assertTrue(Deck.peerKey(1).isEmpty(), "node 1 is not part of a run of one");
    }

    private void initOneNode() throws Exception {
        Deck.initStatic(0, 1, DeckLauncher.writeNodesFile(dir.resolve("nodes"), 1));
    }

    @Test
    void callsBeforeInitFailWithWrongState() {
        assertFalse(Deck.isInitialized());
        DeckException e = assertThrows(DeckException.class, () -> Mailbox.create("early"));
        assertEquals("deck_mbox_create", e.function());
        assertTrue(e.getMessage().contains("DECK_ESTATE"), e.getMessage());
        assertEquals("deck_node", assertThrows(DeckException.class, Deck::node).function());
    }

    @Test
    void initStaticMakesThisProcessNodeZeroOfOne() throws Exception {
        initOneNode();
        assertTrue(Deck.isInitialized());
        assertEquals(0, Deck.node());
        assertEquals(1, Deck.numNodes());
        Deck.barrier();
        DeckException again = assertThrows(DeckException.class, this::initOneNode);
        assertTrue(again.getMessage().contains("deck_init_static failed with DECK_ESTATE"), again.getMessage());
    }

    @Test
    void initTakesItsOptionsOutOfTheArguments() throws Exception {
        Path nodes = DeckLauncher.writeNodesFile(dir.resolve("nodes"), 1);
        String[] rest = Deck.init("first", "-deck_id", "0", "-deck_nodes", "1", "-deck_file", nodes.toString(), "last");
        assertArrayEquals(new String[] {"first", "last"}, rest);
        assertEquals(0, Deck.node());
    }

    @Test
    void aBadNodesFileIsAConfigurationError() {
        DeckException e = assertThrows(DeckException.class, () -> Deck.initStatic(0, 1, dir.resolve("absent")));
        assertTrue(e.getMessage().contains("DECK_ECONFIG"), e.getMessage());
        assertTrue(e.getMessage().contains(dir.resolve("absent").toString()), e.getMessage());
        assertFalse(Deck.isInitialized());
    }

    @Test
    void messagesPostedToOwnMailboxArriveInOrder() throws Exception {
        initOneNode();
        try (Mailbox inbox = Mailbox.create("self");
                Mailbox outbox = Mailbox.clone("self");
                Message message = Message.create(64)) {
            assertTrue(inbox.isCreated());
            assertFalse(outbox.isCreated());
            assertEquals("self", outbox.name());
            assertEquals(0, outbox.node());
            for (int i = 0; i < 5; i++) {
                message.clear();
                outbox.post(message.pack(new int[] {i}));
            }
            int[] value = new int[1];
            for (int i = 0; i < 5; i++) {
                assertTrue(inbox.retrieve(message, 1000));
                message.unpack(value);
                assertEquals(i, value[0]);
            }
            assertFalse(inbox.retrieve(message, 0));
            assertFalse(inbox.retrieve(message, 50));
        }
    }

    @Test
    void mailboxMisuseNamesTheCallAndTheReason() throws Exception {
        initOneNode();
        try (Mailbox inbox = Mailbox.create("only-once"); Message message = Message.create(8)) {
            DeckException exists = assertThrows(DeckException.class, () -> Mailbox.create("only-once"));
            assertTrue(exists.getMessage().contains("DECK_EEXIST"), exists.getMessage());
            DeckException wrongKind = assertThrows(DeckException.class, () -> inbox.post(message));
            assertEquals("deck_mbox_post", wrongKind.function());
            assertTrue(wrongKind.getMessage().contains("only-once"), wrongKind.getMessage());
            char[] longName = new char[64];
            Arrays.fill(longName, 'x');
            DeckException tooLong = assertThrows(DeckException.class, () -> Mailbox.create(new String(longName)));
            assertTrue(tooLong.getMessage().contains("DECK_EINVAL"), tooLong.getMessage());
        }
    }

    @Test
    void closingAMailboxWakesAThreadWaitingOnIt() throws Exception {
        initOneNode();
        Mailbox inbox = Mailbox.create("closing");
        Message message = Message.create(8);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                inbox.retrieve(message);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        waiter.start();
        // Close only once the waiter is inside the native retrieve.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!inNativeRetrieve(waiter) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(inNativeRetrieve(waiter), "the waiter never reached deck_mbox_retrv");
        inbox.close();
        Throwable woken = outcome.get(10, TimeUnit.SECONDS);
        assertTrue(woken instanceof DeckException, String.valueOf(woken));
        assertEquals(-12, ((DeckException) woken).code(), woken.getMessage());
        assertThrows(IllegalStateException.class, () -> inbox.retrieve(message));
        message.close();
    }

    private static boolean inNativeRetrieve(Thread thread) {
        StackTraceElement[] stack = thread.getStackTrace();
        return stack.length > 0 && stack[0].getMethodName().startsWith("deck_mbox_retrv");
    }
}
