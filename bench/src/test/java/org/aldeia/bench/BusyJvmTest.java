package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The application phase's third JVM computes while it runs and never outlives its stop. */
@Timeout(60)
class BusyJvmTest {

    @Test
    void itBurnsCpuUntilStoppedThenIsGone() throws Exception {
        Process busy = BusyJvm.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // Its CPU time grows well past a JVM's start-up: it is computing, not idle.
            while (busy.info().totalCpuDuration().map(d -> d.toMillis()).orElse(0L) < 2000
                    && System.nanoTime() < deadline) {
                assertTrue(busy.isAlive(), "the busy JVM ended by itself");
                Thread.sleep(100);
            }
            assertTrue(busy.info().totalCpuDuration().orElseThrow().toMillis() >= 2000, "the busy JVM does not compute");
        } finally {
            BusyJvm.stop(busy);
        }
        assertFalse(busy.isAlive());
    }
}
