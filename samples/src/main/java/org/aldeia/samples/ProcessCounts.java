package org.aldeia.samples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What a JVM holds that must return to its baseline once its connections are closed: threads
 * (those of the JIT and the GC, which come and go on their own, left out) and descriptors.
 *
 * @param threads threads of this process, less the JVM's elastic ones
 * @param descriptors open file descriptors of this process
 */
record ProcessCounts(int threads, int descriptors) {

    static ProcessCounts now() throws IOException {
        int threads = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm")).trim();
                } catch (IOException gone) {
                    continue;   // the thread ended meanwhile
                }
                if (!name.matches("C[12] CompilerThre|GC Thread#\\d+|G1 .*|VM Periodic Tas")) {
                    threads++;
                }
            }
        }
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return new ProcessCounts(threads, (int) fds.count() - 1);   // less the listing's own
        }
    }

    /** The counts once they are back at {@code baseline}, or what they are after 10 s. */
    static ProcessCounts settled(ProcessCounts baseline) throws IOException, InterruptedException {
        ProcessCounts now = now();
        for (int i = 0; i < 100 && !now.withinBaseline(baseline); i++) {
            Thread.sleep(100);
            now = now();
        }
        return now;
    }

    boolean withinBaseline(ProcessCounts baseline) {
        return threads <= baseline.threads && descriptors <= baseline.descriptors;
    }
}
