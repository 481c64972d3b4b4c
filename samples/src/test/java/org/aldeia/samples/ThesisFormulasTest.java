package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Checks the formulas against the thesis's own figures (seeds/003, section 5.2). The thesis
 * reports one-way times and bandwidths averaged over 100 executions, so its Mb/s figures match
 * what the formulas give for its one-way times to within a fraction of a percent, not exactly.
 */
class ThesisFormulasTest {

    @Test
    void oneWayTimeIsHalfTheRoundTripPerIteration() {
        // 100 round trips in 216.06 ms is the thesis's DECK/TCP 10000-byte one-way time, 1080.3 us.
        assertEquals(1080.3, ThesisFormulas.oneWayMicros(216.06, 100), 1e-9);
        assertEquals(5.0, ThesisFormulas.oneWayMicros(1.0, 100), 1e-12);
    }

    @Test
    void bandwidthIsBytesOverOneWaySeconds() {
        // 1000 B x 100 iterations, t_c = 100 ms, one way 0.05 s: 2e6 B/s = 15.2587890625 Mb/s.
        double bytesPerSecond = ThesisFormulas.bytesPerSecond(1000, 100, 100.0);
        assertEquals(2e6, bytesPerSecond, 1e-6);
        assertEquals(15.2587890625, ThesisFormulas.megabitsPerSecond(bytesPerSecond), 1e-12);
    }

    @Test
    void deckTcpTenThousandBytesGivesTheThesisBandwidth() {
        // Fig. 5.3/5.4: 1080.3 us one way for 10000 B, reported as 70.5 Mb/s.
        double totalMillis = 1080.3 * 2 * 100 / 1e3;
        double mbps = ThesisFormulas.megabitsPerSecond(ThesisFormulas.bytesPerSecond(10000, 100, totalMillis));
        assertEquals(70.5, mbps, 70.5 * 0.003);
    }

    @Test
    void vapiTenThousandBytesGivesTheThesisBandwidth() {
        // Fig. 5.5/5.6: 198.2 us one way for 10000 B with MTU 2048, reported as 384.3 Mb/s.
        double totalMillis = 198.2 * 2 * 100 / 1e3;
        double mbps = ThesisFormulas.megabitsPerSecond(ThesisFormulas.bytesPerSecond(10000, 100, totalMillis));
        assertEquals(384.3, mbps, 384.3 * 0.003);
    }

    @Test
    void serializationOfTenMillionIntsGivesTheThesisThroughput() {
        // Table 5.1: 10^7 ints (40,000,000 B) in 3626.1 ms is "about 84 Mb/s".
        assertEquals(84.0, ThesisFormulas.megabitsPerSecond(40_000_000L, 3626.1), 0.5);
    }
}
