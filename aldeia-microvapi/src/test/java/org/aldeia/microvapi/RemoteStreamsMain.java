package org.aldeia.microvapi;

import java.net.InetAddress;

/**
 * The {@link StreamScenarios} against a {@link PeerMain} on another host (in the tests, another
 * emulated host: {@link TwoHostsTest}): one {@code OK <scenario> in <s> s} line each, then
 * {@code STREAMS OK}, exit 0; at the first failure {@code STREAMS FAILED <exception>} (one
 * line), its trace on stderr, exit 1.
 *
 * <p>Arguments: host port randomBytes (each way, random writes and reads) bulkBytes (timed, to the peer).
 */
public final class RemoteStreamsMain {

    private RemoteStreamsMain() {
    }

    public static void main(String[] args) {
        try {
            StreamScenarios scenarios = new StreamScenarios(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
            scenarios.runEach(System.out, Long.parseLong(args[2]), Long.parseLong(args[3]));
            System.out.println("STREAMS OK");
            System.exit(0); // DECK and Aldeia threads are not all daemons; the shutdown hook closes them
        } catch (Throwable t) {
            System.out.println("STREAMS FAILED " + t.toString().replace('\n', ' '));
            t.printStackTrace();
            System.exit(1);
        }
    }
}
