package org.aldeia.microvapi;

import org.aldeia.core.AldeiaConfiguration;

/**
 * The adapter name MicroVAPI is opened with. Real VAPI took "InfiniHost0"; MicroVAPI reads its
 * settings from that string instead, as the thesis did: the MTU, the DECK id, the number of
 * processes and the nodes file (static), or "deck=dynamic".
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
        return s.append(",deck_transport=").append(configuration.deckTransport()).toString();
    }
}
