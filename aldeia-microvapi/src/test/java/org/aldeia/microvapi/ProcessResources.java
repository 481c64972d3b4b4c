package org.aldeia.microvapi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.aldeia.deck.DeckSegments;

/**
 * What a process holds that an attacker could make it waste, read from /proc and
 * /dev/shm/deck-uid: its threads (but the JVM's own compiler and GC threads, which come and go
 * with the load), open descriptors, DECK shared segments and listening TCP ports.
 */
record ProcessResources(int threads, int descriptors, int segments, Set<Integer> listeningPorts) {

    /** Native names of the JVM's threads whose number it changes by itself (15 characters at most). */
    private static final Pattern JVM_ELASTIC = Pattern.compile("C[12] CompilerThre|GC Thread#\\d+|G1 .*");
    private static final String LISTEN = "0A";

    static ProcessResources of(long pid) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        int threads = 0;
        try (Stream<Path> tasks = Files.list(proc.resolve("task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                threads += JVM_ELASTIC.matcher(comm(task)).matches() ? 0 : 1;
            }
        }
        int descriptors;
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            descriptors = (int) fds.count();
        }
        Set<Integer> ports = new TreeSet<>();
        for (InetSocketAddress address : listeningAddresses(pid)) {
            ports.add(address.getPort());
        }
        return new ProcessResources(threads, descriptors, DeckSegments.ownedBy(pid).size(), ports);
    }

    /** The addresses (address and port) process {@code pid} listens on. */
    static Set<InetSocketAddress> listeningAddresses(long pid) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        Set<String> sockets = new HashSet<>();   // the inodes of its sockets
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        sockets.add(target.substring(8, target.length() - 1));
                    }
                } catch (NoSuchFileException closedMeanwhile) {
                    // not a socket of it any more
                }
            }
        }
        return listening(proc, sockets);
    }

    /** A thread's name; "" for one that ended since it was listed (gone, or ESRCH on the read). */
    private static String comm(Path task) throws IOException {
        try {
            return Files.readString(task.resolve("comm")).strip();
        } catch (NoSuchFileException endedMeanwhile) {
            return "";
        } catch (IOException e) {
            if (!Files.exists(task)) {
                return "";   // ended between the listing and the read: "No such process"
            }
            throw e;
        }
    }

    /**
     * The local addresses of the LISTEN sockets in /proc/PID/net/tcp and tcp6 whose inode is one of
     * {@code sockets}. An address there is the kernel's 32-bit words in hex, each in this
     * machine's (little-endian) order, then ':' and the port in hex.
     */
    private static Set<InetSocketAddress> listening(Path proc, Set<String> sockets) throws IOException {
        Set<InetSocketAddress> addresses = new HashSet<>();
        for (String name : List.of("tcp", "tcp6")) {
            Path table = proc.resolve("net").resolve(name);
            if (!Files.exists(table)) {
                continue;
            }
            List<String> lines = Files.readAllLines(table);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                if (f.length > 9 && f[3].equals(LISTEN) && sockets.contains(f[9])) {
                    String[] local = f[1].split(":");
                    addresses.add(new InetSocketAddress(address(local[0]), Integer.parseInt(local[1], 16)));
                }
            }
        }
        return addresses;
    }

    private static InetAddress address(String hexWords) throws IOException {
        byte[] bytes = new byte[hexWords.length() / 2];
        for (int w = 0; w < bytes.length / 4; w++) {
            int word = Integer.parseUnsignedInt(hexWords.substring(8 * w, 8 * w + 8), 16);
            for (int b = 0; b < 4; b++) {
                bytes[4 * w + b] = (byte) (word >>> (8 * b));
            }
        }
        return InetAddress.getByAddress(bytes);
    }

    /**
     * The resources of {@code pid} once they equal {@code target} or, with {@code target} null,
     * once they have not changed for 3 s; at the latest after {@code maxMillis}: deadlines and idle
     * timeouts (the bootstrap's workers end after 2 s idle) have to pass first.
     */
    static ProcessResources settled(long pid, ProcessResources target, long maxMillis) throws Exception {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        ProcessResources last = of(pid);
        long stableSince = System.nanoTime();
        while (System.nanoTime() - end < 0 && !last.equals(target)) {
            TimeUnit.MILLISECONDS.sleep(250);
            ProcessResources now = of(pid);
            if (!now.equals(last)) {
                last = now;
                stableSince = System.nanoTime();
            } else if (target == null && System.nanoTime() - stableSince > TimeUnit.SECONDS.toNanos(3)) {
                break;
            }
        }
        return last;
    }

    /** The most of each resource a process holds while this samples it, every 20 ms on its own thread. */
    static final class Peak {
        private final Thread sampler;
        private volatile boolean stopped;
        private volatile ProcessResources most;

        Peak(long pid) throws IOException {
            most = of(pid);
            sampler = new Thread(() -> {
                while (!stopped) {
                    try {
                        ProcessResources now = of(pid);
                        most = new ProcessResources(Math.max(most.threads(), now.threads()),
                                Math.max(most.descriptors(), now.descriptors()), Math.max(most.segments(), now.segments()),
                                most.listeningPorts());
                        TimeUnit.MILLISECONDS.sleep(20);
                    } catch (IOException | InterruptedException e) {
                        return;
                    }
                }
            }, "peak-sampler");
            sampler.setDaemon(true);
            sampler.start();
        }

        ProcessResources stop() throws InterruptedException {
            stopped = true;
            sampler.join();
            return most;
        }
    }

    /** For the closing note and failure messages. */
    @Override
    public String toString() {
        return threads + " threads, " + descriptors + " descriptors, " + segments + " segments, listening on "
                + listeningPorts;
    }
}
