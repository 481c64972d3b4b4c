package org.aldeia.agent;

import java.rmi.NoSuchObjectException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A textbook RMI server with no socket factory anywhere: {@code RmiPlainServer <port> <calls>}
 * creates a registry on the port, exports a {@link Reverser} on an anonymous port, prints
 * {@code READY <port>}, serves {@code calls} calls, prints {@code SERVED <calls>} and exits.
 */
public final class RmiPlainServer implements Reverser {

    private static final long UNEXPORT_WAIT_MILLIS = 10_000;

    private final CountDownLatch calls;

    private RmiPlainServer(int calls) {
        this.calls = new CountDownLatch(calls);
    }

    @Override
    public int[] reverse(int[] values) {
        int[] reversed = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            reversed[i] = values[values.length - 1 - i];
        }
        calls.countDown();
        return reversed;
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int expected = Integer.parseInt(args[1]);
        RmiPlainServer server = new RmiPlainServer(expected);
        Registry registry = LocateRegistry.createRegistry(port);
        registry.rebind(NAME, UnicastRemoteObject.exportObject(server, 0));
        System.out.println("READY " + port);
        server.calls.await();
        unexportWhenIdle(server);
        UnicastRemoteObject.unexportObject(registry, true);
        System.out.println("SERVED " + expected);
    }

    /**
     * Unexports once the last call has written its reply: RMI refuses a non-forced unexport
     * while a call is in progress, and the last countDown happens before the reply is sent.
     */
    private static void unexportWhenIdle(RmiPlainServer server) throws NoSuchObjectException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(UNEXPORT_WAIT_MILLIS);
        while (!UnicastRemoteObject.unexportObject(server, false)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the last call did not finish in " + UNEXPORT_WAIT_MILLIS + " ms");
            }
            Thread.sleep(10);
        }
    }
}
