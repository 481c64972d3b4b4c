package org.aldeia.microvapi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;

/**
 * The far end of {@link ManySocketsTest}: accepts {@code count} Aldeia connections and keeps
 * them all open, then, with one thread, reads one byte from each in accept order and writes it
 * back plus one. Prints {@code PORT <n>} when listening, {@code ACCEPTED} once it holds every
 * connection, {@code ECHOED} when each has answered; then waits for end of stream on all of them.
 */
public final class ManySocketsMain {

    private ManySocketsMain() {
    }

    public static void main(String[] args) throws IOException {
        int count = Integer.parseInt(args[0]);
        List<AldeiaSocket> sockets = new ArrayList<>(count);
        try (AldeiaServerSocket server = new AldeiaServerSocket(0, 1024, InetAddress.getLoopbackAddress())) {
            System.out.println("PORT " + server.getLocalPort());
            System.out.flush();
            while (sockets.size() < count) {
                sockets.add(server.accept());
            }
        }
        System.out.println("ACCEPTED");
        System.out.flush();
        for (AldeiaSocket socket : sockets) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            int b = in.read();
            if (b < 0) {
                throw new IOException("socket " + socket.id() + " ended before its byte");
            }
            out.write(b + 1);
            out.flush();
        }
        System.out.println("ECHOED");
        System.out.flush();
        for (AldeiaSocket socket : sockets) {
            if (socket.getInputStream().read() >= 0) {
                throw new IOException("socket " + socket.id() + " sent more than its byte");
            }
            socket.close();
        }
        System.out.println("CLOSED");
    }
}
