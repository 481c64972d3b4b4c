package org.aldeia.bench;

import java.io.Serializable;
import java.util.zip.CRC32;

/**
 * The objects of the application phase, sent with ObjectOutputStream as an RPC program sends
 * its calls: a request carries an id and a payload, the response the same id, the CRC-32 of the
 * request's payload (so the server has read every byte) and a payload of the same size.
 */
final class AppMessages {

    private AppMessages() {
    }

    record Request(long id, byte[] payload) implements Serializable {
    }

    record Response(long id, int crc, byte[] payload) implements Serializable {
    }

    /** What the server answers to {@code request}: its payload back, with its CRC-32. */
    static Response answer(Request request) {
        return new Response(request.id(), crc(request.payload()), request.payload());
    }

    static int crc(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return (int) crc.getValue();
    }
}
