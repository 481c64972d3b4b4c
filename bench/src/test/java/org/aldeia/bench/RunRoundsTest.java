package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunRoundsTest {

    private static TransportResult measured() {
        return new TransportResult(Transport.JDK_LOOPBACK,
                List.of(Measurement.total(Measurement.Metric.BANDWIDTH, 1024, 1, 1000)), null);
    }

    @Test
    void eachRoundRunsEverySlotOnceInOrder() throws Exception {
        List<String> order = new ArrayList<>();
        Map<String, List<TransportResult>> results = RunRounds.run(List.of("jdk", "aldeia"), 3, (slot, number) -> {
            order.add(slot + number);
            return measured();
        }, number -> { });
        assertEquals(List.of("jdk1", "aldeia1", "jdk2", "aldeia2", "jdk3", "aldeia3"), order);
        assertEquals(List.of("jdk", "aldeia"), List.copyOf(results.keySet()));
        assertEquals(3, results.get("aldeia").size());
    }

    @Test
    void eachRoundEndsWithItsOtherRuns() throws Exception {
        List<String> order = new ArrayList<>();
        RunRounds.run(List.of("jdk", "aldeia"), 2, (slot, number) -> {
            order.add(slot + number);
            return measured();
        }, number -> order.add("anchors" + number));
        assertEquals(List.of("jdk1", "aldeia1", "anchors1", "jdk2", "aldeia2", "anchors2"), order);
    }

    @Test
    void aSlotThatMeasuredNothingIsNotRunAgain() throws Exception {
        List<String> order = new ArrayList<>();
        Map<String, List<TransportResult>> results = RunRounds.run(List.of("broken", "jdk"), 2, (slot, number) -> {
            order.add(slot + number);
            return slot.equals("broken") ? new TransportResult(Transport.JDK_LOOPBACK, List.of(), "cannot run")
                    : measured();
        }, number -> { });
        assertEquals(List.of("broken1", "jdk1", "jdk2"), order);
        assertEquals(1, results.get("broken").size());
        assertEquals("cannot run", results.get("broken").get(0).failure());
    }
}
