package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * An object graph that only survives serialization if references are kept: a ring of nodes
 * (a cycle), one map shared by every node that points back at the ring's head (a second
 * cycle) and holds the same {@code int[1_000_000]} the graph holds.
 */
record RingGraph(Node head, int[] numbers) implements Serializable {

    private static final long serialVersionUID = 1L;
    // Serialization recurses once per node along `next`; 1000 overflowed the stack of the
    // thread JUnit runs a @Timeout test on. 200 still closes the cycle.
    static final int RING_SIZE = 200;
    static final int NUMBERS = 1_000_000;

    static final class Node implements Serializable {
        private static final long serialVersionUID = 1L;
        final int value;
        final Map<String, Object> shared;
        Node next;

        Node(int value, Map<String, Object> shared) {
            this.value = value;
            this.shared = shared;
        }
    }

    static RingGraph build(long seed) {
        Random random = new Random(seed);
        Map<String, Object> shared = new HashMap<>();
        Node head = new Node(random.nextInt(), shared);
        Node last = head;
        for (int i = 1; i < RING_SIZE; i++) {
            last.next = new Node(random.nextInt(), shared);
            last = last.next;
        }
        last.next = head;
        int[] numbers = random.ints(NUMBERS).toArray();
        shared.put("head", head);
        shared.put("numbers", numbers);
        shared.put("label", "ring of " + RING_SIZE);
        return new RingGraph(head, numbers);
    }

    /** Asserts that {@code copy} has this graph's values and the same sharing and cycles. */
    void assertCopiedAs(RingGraph copy) {
        assertArrayEquals(numbers, copy.numbers, "int[" + NUMBERS + "]");
        Node original = head;
        Node copied = copy.head;
        for (int i = 0; i < RING_SIZE; i++) {
            assertEquals(original.value, copied.value, "value of node " + i);
            assertSame(copy.head.shared, copied.shared, "node " + i + " must share the head's map");
            original = original.next;
            copied = copied.next;
        }
        assertSame(copy.head, copied, "the ring must close after " + RING_SIZE + " nodes");
        assertSame(copy.head, copy.head.shared.get("head"), "the shared map must point back at the head");
        assertSame(copy.numbers, copy.head.shared.get("numbers"), "the array must be shared, not copied twice");
        assertEquals(head.shared.get("label"), copy.head.shared.get("label"));
    }
}
