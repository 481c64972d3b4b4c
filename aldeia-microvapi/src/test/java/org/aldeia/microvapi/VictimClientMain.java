package org.aldeia.microvapi;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.PeerMain.Command;

/**
 * The client of a live connection under attack ({@link AttackTest}): one Aldeia connection to
 * a {@link PeerMain} child, over which it writes stream {@code seed} until a line {@code STOP}
 * arrives on its stdin; then it ends its output and compares the count the server verified
 * with its own. Prints {@code STREAMING} once the first bytes went out, then {@code STREAM OK
 * <bytes>}, or {@code STREAM FAILED <exception>} (one line) and exits 1.
 *
 * <p>Arguments: port seed [host], the server's host (default: this one's loopback address).
 */
public final class VictimClientMain {

    private VictimClientMain() {
    }

    public static void main(String[] args) throws InterruptedException, UnknownHostException {
        int port = Integer.parseInt(args[0]);
        long seed = Long.parseLong(args[1]);
        InetAddress host = args.length > 2 ? InetAddress.getByName(args[2]) : InetAddress.getLoopbackAddress();
        AtomicBoolean stop = new AtomicBoolean();
        Thread stdin = new Thread(() -> awaitStop(stop), "stdin");
        stdin.setDaemon(true);
        stdin.start();
        try (AldeiaSocket socket = PeerMain.request(host, port, Command.VERIFY_UNTIL_END, seed, 0)) {
            AtomicInteger blocks = new AtomicInteger();
            long sent = StreamCheck.sendUntil(socket, seed, () -> {
                if (blocks.incrementAndGet() == 2) { // the first block went out
                    System.out.println("STREAMING");
                    System.out.flush();
                }
                return stop.get();
            });
            long verified = new DataInputStream(socket.getInputStream()).readLong();
            if (verified != sent) {
                throw new IOException("the server verified " + verified + " bytes, " + sent + " were sent");
            }
            System.out.println("STREAM OK " + sent);
        } catch (IOException | RuntimeException e) {
            System.out.println("STREAM FAILED " + e.toString().replace('\n', ' '));
            System.out.flush();
            System.exit(1);
        }
    }

    private static void awaitStop(AtomicBoolean stop) {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.equals("STOP")) {
                    break;
                }
            }
        } catch (IOException e) {
            // stdin gone: the test ended; stop as if told
        }
        stop.set(true);
    }
}
