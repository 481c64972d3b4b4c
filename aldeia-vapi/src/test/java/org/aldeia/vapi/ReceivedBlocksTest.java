package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ReceivedBlocksTest {

    @Test
    void servesBlocksInArrivalOrderAndListsEmptiedBuffers() {
        ReceivedBlocks blocks = new ReceivedBlocks(3);
        blocks.add(2, 100);
        blocks.add(0, 50);
        assertEquals(150, blocks.held());
        assertEquals(2, blocks.headBuffer());
        blocks.consume(30);
        assertEquals(30, blocks.headOffset());
        assertEquals(70, blocks.headRemaining());
        assertEquals(0, blocks.consumedCount(), "a partly read buffer stays held");
        blocks.consume(70);
        assertEquals(0, blocks.headBuffer());
        assertEquals(0, blocks.headOffset());
        assertEquals(1, blocks.consumedCount());
        assertEquals(2, blocks.consumed(0));
        blocks.add(1, 10);   // wraps the FIFO
        blocks.consume(50);
        blocks.consume(10);
        assertEquals(0, blocks.held());
        assertEquals(3, blocks.consumedCount());
        assertEquals(1, blocks.consumed(2));
        blocks.clearConsumed();
        assertEquals(0, blocks.consumedCount());
    }

    @Test
    void refusesOverfillEmptyBlocksAndOverconsumption() {
        ReceivedBlocks blocks = new ReceivedBlocks(1);
        assertThrows(IllegalStateException.class, () -> blocks.add(0, 0));
        blocks.add(0, 5);
        assertThrows(IllegalStateException.class, () -> blocks.add(0, 5));
        assertThrows(IllegalArgumentException.class, () -> blocks.consume(6));
    }
}
