package org.aldeia.vapi;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Gives back the memory of send rings that have been idle a while, as TCP's send buffers shrink:
 * a ring's pages become resident as a burst writes them, and stay so; once a ring has nothing
 * in flight and took no write between two visits of the trimmer ({@link #IDLE_MILLIS} apart),
 * its pages beyond the first {@link #KEEP_BYTES} (which a ring restarting at offset 0 uses
 * first) are returned to the kernel. One daemon thread per JVM, started with the first ring;
 * only for libraries that copy a send's bytes when it is posted (MicroVAPI), since a real HCA
 * reads registered memory that must stay put.
 */
final class RingTrimmer {

    static final long IDLE_MILLIS = 1000;
    static final int KEEP_BYTES = 64 * 1024;

    private static final List<WeakReference<SendPath>> RINGS = new ArrayList<>();
    private static Thread thread;

    private RingTrimmer() {
    }

    static synchronized void register(SendPath ring) {
        RINGS.add(new WeakReference<>(ring));
        if (thread == null) {
            thread = new Thread(RingTrimmer::run, "aldeia-ring-trimmer");
            thread.setDaemon(true);
            thread.start();
        }
    }

    private static void run() {
        while (true) {
            try {
                TimeUnit.MILLISECONDS.sleep(IDLE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            for (SendPath ring : live()) {
                ring.trimIfIdle(KEEP_BYTES);
            }
        }
    }

    /** The rings still open; forgets the others. */
    private static synchronized List<SendPath> live() {
        List<SendPath> live = new ArrayList<>(RINGS.size());
        RINGS.removeIf(ref -> {
            SendPath ring = ref.get();
            if (ring == null || ring.isReleased()) {
                return true;
            }
            live.add(ring);
            return false;
        });
        return live;
    }
}
