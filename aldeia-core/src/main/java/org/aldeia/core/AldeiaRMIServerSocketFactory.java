package org.aldeia.core;

import java.io.IOException;
import java.net.ServerSocket;
import java.rmi.server.RMIServerSocketFactory;

/**
 * The server half of RMI over Aldeia (see {@link AldeiaRMIClientSocketFactory}): RMI's listener
 * for exported objects and registries becomes an {@link AldeiaServerSocket}.
 *
 * <p>All instances are equal: RMI shares one listening socket between the objects exported on
 * the same port only when their server socket factories are equal.
 */
public final class AldeiaRMIServerSocketFactory implements RMIServerSocketFactory {

    /** A factory to export remote objects with. */
    public AldeiaRMIServerSocketFactory() {
    }

    /** Listens on {@code port} on every local address; 0 picks an ephemeral port, as RMI expects. */
    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new AldeiaServerSocket(port);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof AldeiaRMIServerSocketFactory;
    }

    @Override
    public int hashCode() {
        return AldeiaRMIServerSocketFactory.class.getName().hashCode();
    }

    @Override
    public String toString() {
        return "AldeiaRMIServerSocketFactory";
    }
}
