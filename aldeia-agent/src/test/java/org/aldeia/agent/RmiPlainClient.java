package org.aldeia.agent;

import java.rmi.registry.LocateRegistry;
import java.util.Arrays;
import java.util.Random;

/**
 * A textbook RMI client with no socket factory: {@code RmiPlainClient <host> <port> <calls> <ints>}
 * looks the {@link Reverser} up, has it reverse {@code calls} random arrays of {@code ints}
 * ints, checks every answer and prints {@code REVERSED <calls> x <ints>}.
 */
public final class RmiPlainClient {

    private RmiPlainClient() {}

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int calls = Integer.parseInt(args[2]);
        int ints = Integer.parseInt(args[3]);
        Reverser reverser = (Reverser) LocateRegistry.getRegistry(host, port).lookup(Reverser.NAME);
        Random random = new Random(port);
        for (int call = 0; call < calls; call++) {
            int[] values = random.ints(ints).toArray();
            int[] reversed = reverser.reverse(values);
            int[] expected = new int[ints];
            Arrays.setAll(expected, i -> values[ints - 1 - i]);
            if (!Arrays.equals(expected, reversed)) {
                throw new IllegalStateException("call " + call + ": the server's answer is not the reversed array");
            }
        }
        System.out.println("REVERSED " + calls + " x " + ints);
    }
}
