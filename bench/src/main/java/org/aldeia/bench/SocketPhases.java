package org.aldeia.bench;

import java.util.Optional;

/** The phases a row has beyond ping-pong and streaming: those of socket rows, none for the others. */
record SocketPhases(Optional<ConnectionSetup> setup, Optional<ApplicationPhase> application, Optional<RmiPhase> rmi) {

    static final SocketPhases NONE = new SocketPhases(Optional.empty(), Optional.empty(), Optional.empty());

    static SocketPhases of(Transport transport) {
        return new SocketPhases(ConnectionSetup.of(transport), ApplicationPhase.of(transport), RmiPhase.of(transport));
    }
}
