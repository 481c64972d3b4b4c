package org.aldeia.microvapi;

import org.aldeia.core.AldeiaConfiguration;
import org.aldeia.core.DeckSciThresholds;

/**
 * The adapter name MicroVAPI is opened with. Real VAPI took "InfiniHost0"; MicroVAPI reads its
 * settings from that string instead, as the thesis did: the MTU, the DECK id, the number of
 * processes and the nodes file (static), or "deck=dynamic"; and the DECK transport with, for
 * sci, its protocol thresholds.
 */
final class MicroVapiInitString {

    private MicroVapiInitString() {
    }

    static String of(AldeiaConfiguration configuration) {
        StringBuilder s = new StringBuilder("microvapi:mtu=").append(configuration.mtu());
        if (configuration.isStaticDeck()) {
            s.append(",deck_id=").append(configuration.deckId().getAsInt())
                    .append(",deck_nodes=").append(configuration.deckNodes().getAsInt())
                    .append(",deck_file=").append(configuration.deckFile().toAbsolutePath());
        } else {
            s.append(",deck=dynamic");
        }
        s.append(",deck_transport=").append(configuration.deckTransport());
        if ("sci".equals(configuration.deckTransport())) {
            // only the shared-segment protocols use these sizes
            DeckSciThresholds sci = configuration.sciThresholds();
            s.append(",deck_msg_buf_limit=").append(sci.msgBufLimit())
                    .append(",deck_medbuf_size=").append(sci.medbufSize())
                    .append(",deck_mseg_size=").append(sci.msegSize());
        }
        return s.toString();
    }
}
