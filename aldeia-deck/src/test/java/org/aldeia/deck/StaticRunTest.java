package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A two-process static DECK run over tcp, started as deckrun would. */
class StaticRunTest {

    @Test
    void messagesCrossIntactAndInOrderBothWays(@TempDir Path dir) throws Exception {
        DeckLauncher.Result run = new DeckLauncher(2, StaticExchangeMain.class)
                .workDir(dir).timeout(Duration.ofSeconds(120)).launch();
        assertTrue(run.succeeded(), run::toString);
        for (int node = 0; node < 2; node++) {
            assertTrue(run.output(node).contains(StaticExchangeMain.MESSAGES + " messages verified"), run::toString);
        }
    }
}
