package org.aldeia.microvapi;

import java.io.IOException;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.NativeLibraryMissing;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;
import org.aldeia.deck.Deck;
import org.aldeia.deck.DeckLibraries;
import org.aldeia.deck.DeckLibraryMissing;
import org.aldeia.vapi.PeerIntroducer;
import org.aldeia.vapi.Vapi;
import org.aldeia.vapi.VapiLibrary;
import org.aldeia.vapi.VapiTransport;

/**
 * {@code socket_type = SOCKET_DECK}: Aldeia's queue pairs through libmicrovapi, which routes
 * the VAPI calls onto DECK mailboxes (thesis 4.4.4). With deck_id and deck_nodes configured,
 * DECK starts statically from the nodes file; otherwise dynamically, and each connection's
 * bootstrap introduces the two DECK processes to each other.
 */
public final class MicroVapiTransportProvider implements TransportProvider {

    static final String LIBRARY = "microvapi";

    @Override
    public String socketType() {
        return AldeiaConfiguration.SOCKET_DECK;
    }

    @Override
    public boolean isAvailable(AldeiaConfiguration configuration) {
        try {
            DeckLibraries.loadAfterDeck(LIBRARY);
            return true;
        } catch (DeckLibraryMissing e) {
            return false;
        }
    }

    @Override
    public Transport open(AldeiaConfiguration configuration) throws IOException {
        String purpose = "socket_type = " + AldeiaConfiguration.SOCKET_DECK;
        try {
            DeckLibraries.loadAfterDeck(LIBRARY);
        } catch (DeckLibraryMissing e) {
            throw new NativeLibraryMissing(VapiLibrary.fileName(LIBRARY), purpose, e);
        }
        Vapi vapi = VapiLibrary.load(LIBRARY, purpose);
        PeerIntroducer introducer = new DeckPeerIntroducer(configuration.isStaticDeck(),
                configuration.deckListenAddress().orElse(null));
        // The full DECK id is information 1: a LID holds only its low 16 bits, and dynamic ids
        // are wider than that.
        // MicroVAPI copies each send into a DECK message when it posts it: idle rings may shrink
        return VapiTransport.open(vapi, MicroVapiInitString.of(configuration), configuration,
                introducer, MicroVapiTransportProvider::deckNode, describe(configuration)).trimmingIdleRings();
    }

    /** This process's DECK id; MicroVAPI brought DECK up when the adapter was opened. */
    private static int deckNode() {
        try {
            return Deck.node();
        } catch (IOException e) {
            throw new IllegalStateException("MicroVAPI opened the adapter but DECK is not up: " + e.getMessage(), e);
        }
    }

    /** DECK's reading of deck_transport (deck.h): auto is tcp in a static run. */
    private static String describe(AldeiaConfiguration configuration) {
        boolean auto = "auto".equals(configuration.deckTransport());
        String start = configuration.isStaticDeck()
                ? "static/" + (auto ? "tcp" : configuration.deckTransport()) + " (node "
                        + configuration.deckId().getAsInt() + " of " + configuration.deckNodes().getAsInt() + ", "
                        + configuration.deckFile() + ")"
                : "dynamic/" + configuration.deckTransport()
                        + (auto ? " (shared memory with peers on this host, tcp with others)" : "");
        return "MicroVAPI over DECK " + start; // VapiTransport appends the LID and MTU
    }
}
