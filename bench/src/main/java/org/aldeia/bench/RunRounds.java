package org.aldeia.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The order of the bench's runs: in rounds, each round one run of every (transport, placement)
 * slot, instead of all the runs of one slot before the next. This machine goes through slower
 * and faster phases lasting minutes (the same row measured 0.72 µs and 1.24 µs at 64 B a few
 * minutes apart); with the runs of a row back to back, a row could be measured in one phase
 * and the JDK's row it is divided by in another, and the ratio showed the phase. In rounds,
 * every row's median takes one run from each round.
 *
 * <p>A slot whose run measured nothing (the transport cannot run here) is not run again: it
 * would only fail again. After each round's slots come the round's other runs (the anchors'
 * tools), so that they, too, take one run from each phase.
 */
final class RunRounds {

    /** One run of one slot. */
    interface Runner<S> {
        TransportResult run(S slot, int number) throws IOException, InterruptedException;
    }

    private RunRounds() {
    }

    /** What else a round runs, after its slots; {@code number} counts from 1. */
    interface RoundEnd {
        void run(int number) throws IOException, InterruptedException;
    }

    /** Each slot's results, in the slots' order, from {@code runs} rounds, each ending with {@code roundEnd}. */
    static <S> Map<S, List<TransportResult>> run(List<S> slots, int runs, Runner<S> runner, RoundEnd roundEnd)
            throws IOException, InterruptedException {
        Map<S, List<TransportResult>> results = new LinkedHashMap<>();
        for (S slot : slots) {
            results.put(slot, new ArrayList<>());
        }
        for (int number = 1; number <= runs; number++) {
            for (S slot : slots) {
                List<TransportResult> done = results.get(slot);
                if (done.isEmpty() || !done.get(done.size() - 1).measurements().isEmpty()) {
                    done.add(runner.run(slot, number));
                }
            }
            roundEnd.run(number);
        }
        return results;
    }
}
