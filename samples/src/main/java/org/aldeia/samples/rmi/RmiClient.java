package org.aldeia.samples.rmi;

import java.io.IOException;
import java.io.PrintStream;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;

import org.aldeia.core.AldeiaEnvironment;
import org.aldeia.core.AldeiaRMIClientSocketFactory;

/**
 * The client of the RMI sample: looks the {@link Reverser} up in the server's registry (over
 * Aldeia, through the factory given to {@link LocateRegistry#getRegistry}), calls it with
 * arrays of a few KB and checks every answer. The stub it gets back carries the server's
 * Aldeia client factory, so the calls need no factory here.
 */
final class RmiClient {

    private final String host;
    private final int port;
    private final int ints;
    private final int calls;
    private final PrintStream out;

    RmiClient(String host, int port, int ints, int calls, PrintStream out) {
        this.host = host;
        this.port = port;
        this.ints = ints;
        this.calls = calls;
        this.out = out;
    }

    void run() throws Exception {
        Registry registry = LocateRegistry.getRegistry(host, port, new AldeiaRMIClientSocketFactory());
        Reverser reverser = (Reverser) registry.lookup(Reverser.REGISTRY_NAME);
        long start = System.nanoTime();
        for (int call = 0; call < calls; call++) {
            int[] values = values(ints, call);
            check(call, values, reverser.reverse(values));
        }
        double millis = (System.nanoTime() - start) / 1e6;
        out.printf("rmi client: %d calls reversed %d ints each in %.1f ms over %s%n", calls, ints, millis,
                AldeiaEnvironment.global().transport().description());
        out.flush();
    }

    /** Different in every call and at every index, so a stale or shifted reply cannot pass. */
    static int[] values(int length, int call) {
        int[] values = new int[length];
        for (int i = 0; i < length; i++) {
            values[i] = call * 1_000_003 + i * 31 + (i >>> 3);
        }
        return values;
    }

    static void check(int call, int[] sent, int[] received) throws IOException {
        if (received.length != sent.length) {
            throw new IOException("call " + call + ": sent " + sent.length + " ints, got " + received.length + " back");
        }
        for (int i = 0; i < sent.length; i++) {
            int expected = sent[sent.length - 1 - i];
            if (received[i] != expected) {
                throw new IOException("call " + call + ": element " + i + " of the reply is " + received[i]
                        + ", expected " + expected);
            }
        }
    }
}
