package org.aldeia.core;

import java.io.IOException;
import java.io.Serializable;
import java.net.Socket;
import java.rmi.server.RMIClientSocketFactory;

/**
 * The client half of RMI over Aldeia: pass it with an {@link AldeiaRMIServerSocketFactory} to
 * {@code UnicastRemoteObject.exportObject} or {@code LocateRegistry.createRegistry}. It travels
 * inside every stub (hence Serializable), so a client JVM connects over Aldeia without naming
 * it; that JVM only needs aldeia-core and a provider on its class path.
 *
 * <p>All instances are equal: RMI keys its connection cache and endpoints by factory equality,
 * and an identity-based equals would give each deserialized stub its own connections.
 */
public final class AldeiaRMIClientSocketFactory implements RMIClientSocketFactory, Serializable {

    private static final long serialVersionUID = 1L;

    /** A factory to export remote objects with (it holds no state: any two are equal). */
    public AldeiaRMIClientSocketFactory() {
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return new AldeiaSocket(host, port);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof AldeiaRMIClientSocketFactory;
    }

    /** The same in every JVM, as equals does not depend on the instance either. */
    @Override
    public int hashCode() {
        return AldeiaRMIClientSocketFactory.class.getName().hashCode();
    }

    @Override
    public String toString() {
        return "AldeiaRMIClientSocketFactory";
    }
}
