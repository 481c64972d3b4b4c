package org.aldeia.samples.rmi;

import java.io.PrintStream;
import java.rmi.NoSuchObjectException;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;

import org.aldeia.core.AldeiaRMIClientSocketFactory;
import org.aldeia.core.AldeiaRMIServerSocketFactory;

/**
 * The server of the RMI sample: a registry and a {@link Reverser} exported on one port with the
 * Aldeia RMI factories, so every call (and the registry lookup before it) travels over Aldeia
 * sockets. It serves a given number of calls, then prints what its connections carried.
 */
final class RmiServer {

    /** How long an unexport waits for replies still being sent; then the replies are cut off. */
    private static final long REPLY_DRAIN_MILLIS = 10_000;
    private static final long REPLY_DRAIN_POLL_MILLIS = 10;

    private final int port;
    private final int calls;
    private final PrintStream out;

    RmiServer(int port, int calls, PrintStream out) {
        this.port = port;
        this.calls = calls;
        this.out = out;
    }

    void run() throws Exception {
        ConnectionMeter meter = new ConnectionMeter();
        RMIClientSocketFactory clientFactory = new AldeiaRMIClientSocketFactory();
        RMIServerSocketFactory serverFactory = meter.wrap(new AldeiaRMIServerSocketFactory());
        ReverserService service = new ReverserService();

        Registry registry = LocateRegistry.createRegistry(port, clientFactory, serverFactory);
        try {
            registry.rebind(Reverser.REGISTRY_NAME, UnicastRemoteObject.exportObject(service, port, clientFactory,
                    serverFactory));
            try {
                out.println("rmi server " + RmiDemo.READY + " " + port);
                out.flush();
                service.awaitCalls(calls);
            } finally {
                unexportAfterReplies(service);
            }
        } finally {
            UnicastRemoteObject.unexportObject(registry, true);
        }
        out.println("rmi server served " + calls + " calls: " + meter.summary());
        out.flush();
    }

    /**
     * A non-forced unexport fails while a call is still in progress, and the last call is: its
     * reply is being marshalled. RMI has no way to wait for that, so poll briefly; a client
     * that never reads its reply only delays the end by REPLY_DRAIN_MILLIS.
     */
    private static void unexportAfterReplies(ReverserService service) throws NoSuchObjectException,
            InterruptedException {
        long deadline = System.nanoTime() + REPLY_DRAIN_MILLIS * 1_000_000;
        while (!UnicastRemoteObject.unexportObject(service, false)) {
            if (System.nanoTime() > deadline) {
                UnicastRemoteObject.unexportObject(service, true);
                return;
            }
            Thread.sleep(REPLY_DRAIN_POLL_MILLIS);
        }
    }
}
