package org.aldeia.microvapi.parity;

import java.io.IOException;
import java.util.EnumMap;
import java.util.Map;

/**
 * The far-end JVMs of one test class, one per {@link SocketKind}, started when first needed
 * and kept for the class's tests; {@link #stopAll} (from an {@code @AfterAll}) ends them.
 */
final class FarEnds {

    private final Map<SocketKind, FarEndProcess> started = new EnumMap<>(SocketKind.class);

    synchronized FarEndProcess of(SocketKind kind) throws IOException {
        FarEndProcess farEnd = started.get(kind);
        if (farEnd == null) {
            farEnd = FarEndProcess.start(kind);
            started.put(kind, farEnd);
        }
        return farEnd;
    }

    synchronized void stopAll() throws InterruptedException {
        for (FarEndProcess farEnd : started.values()) {
            farEnd.close();
        }
        started.clear();
    }
}
