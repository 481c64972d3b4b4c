package org.aldeia.bench;

import static org.aldeia.bench.BenchProtocol.HEADER_BYTES;

import java.io.IOException;

/**
 * The echoing side: answers pings, counts and checks stream chunks, acknowledges each stream and
 * each message of the asynchronous-write phase,
 * reports its JVM's CPU time and serves the connection set-up, application and RMI phases when asked.
 */
final class BenchServer {

    private BenchServer() {
    }

    /**
     * Serves {@code link} until the client's END; returns how many pings were echoed.
     * {@code phases} serves the connection set-up and application phases (none: the row has neither).
     */
    static long serve(MessageLink link, SocketPhases phases) throws IOException {
        byte[] frame = new byte[HEADER_BYTES + BenchClient.LARGEST_MESSAGE];
        byte[] ack = new byte[HEADER_BYTES + 1];
        byte[] cpu = new byte[HEADER_BYTES + Long.BYTES];
        long echoed = 0;
        long nextChunk = 0;
        while (true) {
            int length = link.receive(frame);
            int type = BenchProtocol.type(frame);
            switch (type) {
                case BenchProtocol.PING:
                    link.send(frame, BenchProtocol.PONG, length);
                    link.flush();
                    echoed++;
                    break;
                case BenchProtocol.CHUNK:
                    long sequence = length >= Long.BYTES ? BenchProtocol.getLong(frame, HEADER_BYTES) : -1;
                    if (sequence != nextChunk) {
                        throw new IOException("stream chunk " + nextChunk + " expected, got chunk " + sequence
                                + " (" + length + " bytes): data lost or reordered");
                    }
                    nextChunk++;
                    break;
                case BenchProtocol.STREAM_END:
                    long sent = length == Long.BYTES ? BenchProtocol.getLong(frame, HEADER_BYTES) : -1;
                    if (sent != nextChunk) {
                        throw new IOException("the client streamed " + sent + " chunks but " + nextChunk + " arrived");
                    }
                    nextChunk = 0;
                    link.send(ack, BenchProtocol.ACK, 1);
                    link.flush();
                    break;
                case BenchProtocol.WRITE_TIMED:
                    link.send(ack, BenchProtocol.ACK, 1);
                    link.flush();
                    break;
                case BenchProtocol.CPU_QUERY:
                    BenchProtocol.putLong(cpu, HEADER_BYTES, ProcessCpu.nanos());
                    link.send(cpu, BenchProtocol.CPU_TIME, Long.BYTES);
                    link.flush();
                    break;
                case BenchProtocol.SETUP:
                    if (phases.setup().isEmpty() || length != Integer.BYTES) {
                        throw new IOException("a set-up phase was asked for but this row has none");
                    }
                    phases.setup().get().serve(link, BenchProtocol.getInt(frame, HEADER_BYTES));
                    break;
                case BenchProtocol.APPLICATION:
                    if (phases.application().isEmpty() || length != Integer.BYTES) {
                        throw new IOException("an application phase was asked for but this row has none");
                    }
                    phases.application().get().serve(link, BenchProtocol.getInt(frame, HEADER_BYTES));
                    break;
                case BenchProtocol.RMI:
                    if (phases.rmi().isEmpty()) {
                        throw new IOException("an RMI phase was asked for but this row has none");
                    }
                    phases.rmi().get().serve(link);
                    break;
                case BenchProtocol.END:
                    return echoed;
                default:
                    throw new IOException("unexpected frame type " + type + " (" + length + " bytes)");
            }
        }
    }
}
