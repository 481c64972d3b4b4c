package org.aldeia.microvapi;

import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.DeckSciThresholds;

/**
 * The adapter name MicroVAPI is opened with. Real VAPI took the adapter's name; MicroVAPI reads
 * its settings from that string instead, as the thesis did (and as the fabric library reads
 * "fabric:provider=..."): the MTU, the DECK id, the number of processes, the nodes file and the
 * run secret (static), or "deck=dynamic"; the DECK transport with, unless it is tcp, the
 * thresholds of the shared-memory protocols; and whether DECK tcp is encrypted.
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
            configuration.deckSecretFile().ifPresent(secret ->
                    s.append(",deck_secret_file=").append(secret.toAbsolutePath()));
        } else {
            s.append(",deck=dynamic");
        }
        s.append(",deck_transport=").append(configuration.deckTransport());
        s.append(",deck_tcp_encryption=").append(configuration.deckTcpEncryption() ? "on" : "off");
        s.append(",peer_timeout=").append(configuration.peerTimeout());
        if (!"tcp".equals(configuration.deckTransport())) {
            // only the shared-segment protocols use these sizes (sci, and auto's same-host peers)
            DeckSciThresholds sci = configuration.sciThresholds();
            s.append(",deck_msg_buf_limit=").append(sci.msgBufLimit())
                    .append(",deck_medbuf_size=").append(sci.medbufSize())
                    .append(",deck_mseg_size=").append(sci.msegSize());
        }
        return s.toString();
    }
}
