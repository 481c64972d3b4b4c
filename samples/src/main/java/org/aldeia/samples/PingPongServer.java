package org.aldeia.samples;

import static org.aldeia.samples.PingPongProtocol.END;
import static org.aldeia.samples.PingPongProtocol.HEADER_BYTES;
import static org.aldeia.samples.PingPongProtocol.MAX_PAYLOAD;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;

/** The echoing side of the ping-pong: reads each frame fully, then writes it back and flushes. */
final class PingPongServer {

    private PingPongServer() {
    }

    /** Echoes frames on {@code socket} until the client's end marker; returns how many were echoed. */
    static long serve(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        OutputStream out = socket.getOutputStream();
        byte[] frame = new byte[HEADER_BYTES];
        long echoed = 0;
        while (true) {
            try {
                in.readFully(frame, 0, HEADER_BYTES);
            } catch (EOFException e) {
                throw new EOFException("ping-pong client closed the connection after " + echoed
                        + " messages without sending the end marker");
            }
            int length = PingPongProtocol.readHeader(frame);
            if (length == END) {
                return echoed;
            }
            if (length < 0 || length > MAX_PAYLOAD) {
                throw new IOException("ping-pong header announces " + length + " bytes; expected 0.." + MAX_PAYLOAD);
            }
            if (frame.length < HEADER_BYTES + length) {
                frame = Arrays.copyOf(frame, HEADER_BYTES + length);
            }
            try {
                in.readFully(frame, HEADER_BYTES, length);
            } catch (EOFException e) {
                throw new EOFException("ping-pong client closed the connection in the middle of a "
                        + length + "-byte message");
            }
            out.write(frame, 0, HEADER_BYTES + length);
            out.flush();
            echoed++;
        }
    }
}
