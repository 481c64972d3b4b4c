package org.aldeia.samples;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak (issue 10, item 5): {@code pairs} connections at a time between this JVM and a
 * {@link SoakServer} JVM, for {@code minutes}. Each worker opens a connection, sends 1 to 20
 * messages of random sizes (mostly small, up to {@code --max-message}) in writes of random
 * sizes, reads each echo and checks it and the server's SHA-256 against what it sent, closes, and
 * starts again. Prints a progress line every 10 s and the totals at the end; exits 0 only with no
 * error in either JVM and both JVMs' threads and descriptors back to their baseline.
 *
 * <pre>
 *   ./aldeia soak [--minutes 2] [--pairs 64] [--transport auto|tcp] [--max-message 1048576]
 * </pre>
 */
public final class Soak {

    private final int pairs;
    private final long deadline;
    private final int maxMessage;
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();

    private Soak(int pairs, Duration length, int maxMessage) {
        this.pairs = pairs;
        this.deadline = System.nanoTime() + length.toNanos();
        this.maxMessage = maxMessage;
    }

    public static void main(String[] args) throws Exception {
        double minutes = 2;
        int pairs = 64;
        int maxMessage = 1 << 20;
        String transport = "auto";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--minutes" -> minutes = Double.parseDouble(args[i + 1]);
                case "--pairs" -> pairs = Integer.parseInt(args[i + 1]);
                case "--max-message" -> maxMessage = Integer.parseInt(args[i + 1]);
                case "--transport" -> transport = args[i + 1];
                default -> {
                    System.err.println("usage: soak [--minutes 2] [--pairs 64] [--transport auto|tcp] "
                            + "[--max-message 1048576]; unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (args.length % 2 != 0 || pairs < 1 || maxMessage < 1 || minutes <= 0
                || !(transport.equals("auto") || transport.equals("tcp"))) {
            System.err.println("usage: soak [--minutes 2] [--pairs 64] [--transport auto|tcp] [--max-message 1048576]");
            System.exit(2);
        }
        if (transport.equals("tcp")) {
            Path conf = Files.createTempFile("aldeia-soak-", ".conf");
            conf.toFile().deleteOnExit();
            Files.writeString(conf, "deck_transport = tcp\n");
            System.setProperty("aldeia.configuration", conf.toString());   // this JVM and the server's
        }
        boolean ok = new Soak(pairs, Duration.ofMillis((long) (minutes * 60_000)), maxMessage).run(transport);
        System.exit(ok ? 0 : 1);
    }

    private boolean run(String transport) throws Exception {
        try (ChildJvm server = ChildJvm.start("soak server", SoakServer.class, List.of())) {
            int port = Integer.parseInt(server.awaitLineContaining("PORT ", Duration.ofSeconds(60)).substring(5));
            // brings this JVM's transport up, on a connection that lives past upgrade_after and
            // moves (connections start on TCP), the server's peer link with it: the baselines follow
            exchange(port, new Random(0), 3, 20);
            try (Socket baseline = SocketKind.ALDEIA.connect("127.0.0.1", port)) {
                new DataOutputStream(baseline.getOutputStream()).writeInt(-3);
            }
            server.awaitLineContaining("BASELINE ", Duration.ofSeconds(60));
            ProcessCounts before = ProcessCounts.now();
            long start = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < pairs; i++) {
                long seed = i;
                Thread t = new Thread(() -> work(port, seed), "soak-" + i);
                t.start();
                workers.add(t);
            }
            while (workers.stream().anyMatch(Thread::isAlive)) {
                workers.get(0).join(10_000);
                System.out.printf("soak (%s): %d s, %d connections, %d messages, %d MiB each way, %d errors%n",
                        transport, (System.nanoTime() - start) / 1_000_000_000, connections.get(), messages.get(),
                        bytes.get() >> 20, errors.get());
            }
            try (Socket stop = SocketKind.ALDEIA.connect("127.0.0.1", port)) {
                new DataOutputStream(stop.getOutputStream()).writeInt(-2);
            }
            String serverLine = server.awaitLineContaining("SERVER ", Duration.ofSeconds(60));
            ProcessCounts after = ProcessCounts.settled(before);
            boolean serverClean = serverLine.contains(" errors=0 ") && balanced(serverLine, "threads")
                    && balanced(serverLine, "descriptors");
            System.out.printf("soak (%s) done: %d connections, %d messages, %d bytes each way, %d errors; "
                    + "this JVM threads %d->%d, descriptors %d->%d; %s%n", transport, connections.get(),
                    messages.get(), bytes.get(), errors.get(), before.threads(), after.threads(),
                    before.descriptors(), after.descriptors(), serverLine);
            return errors.get() == 0 && after.withinBaseline(before) && serverClean;
        }
    }

    /** Whether "name=a->b" in the server's line has b <= a. */
    private static boolean balanced(String line, String name) {
        String value = Arrays.stream(line.split(" ")).filter(w -> w.startsWith(name + "=")).findFirst().orElse("");
        String[] ab = value.substring(value.indexOf('=') + 1).split("->");
        return ab.length == 2 && Integer.parseInt(ab[1]) <= Integer.parseInt(ab[0]);
    }

    private void work(int port, long seed) {
        Random random = new Random(seed);
        while (System.nanoTime() - deadline < 0) {
            try {
                exchangeOnce(port, random);
            } catch (IOException | NoSuchAlgorithmException | RuntimeException e) {
                errors.incrementAndGet();
                System.err.println("soak: " + Thread.currentThread().getName() + ": " + e);
            }
        }
    }

    /** One connection: 1 to 20 messages, each echoed and checked, then a close. */
    private void exchangeOnce(int port, Random random) throws IOException, NoSuchAlgorithmException {
        exchange(port, random, 1 + random.nextInt(20), 0);
    }

    /** One connection: {@code count} messages, each echoed and checked, {@code pauseMillis} apart. */
    private void exchange(int port, Random random, int count, long pauseMillis) throws IOException,
            NoSuchAlgorithmException {
        try (Socket socket = SocketKind.ALDEIA.connect("127.0.0.1", port)) {
            connections.incrementAndGet();
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            for (int m = 0; m < count; m++) {
                if (m > 0 && pauseMillis > 0) {
                    try {
                        Thread.sleep(pauseMillis);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted", e);
                    }
                }
                byte[] message = new byte[size(random)];
                random.nextBytes(message);
                out.writeInt(message.length);
                writeInPieces(out, message, random);
                out.flush();
                byte[] echo = in.readNBytes(message.length);
                byte[] digest = in.readNBytes(32);
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                byte[] sent = sha.digest(message);
                if (!Arrays.equals(echo, message) || !Arrays.equals(digest, sent)) {
                    throw new IOException("message " + m + " of " + message.length + " bytes came back altered"
                            + (echo.length < message.length ? " (short: " + echo.length + ")" : ""));
                }
                messages.incrementAndGet();
                bytes.addAndGet(message.length);
            }
            out.writeInt(-1);
            out.flush();
        }
    }

    /** Mostly small: half up to 1 KiB, a third up to 64 KiB, the rest up to maxMessage. */
    private int size(Random random) {
        int kind = random.nextInt(6);
        int bound = kind < 3 ? 1024 : kind < 5 ? 65536 : maxMessage;
        return random.nextInt(Math.min(bound, maxMessage) + 1);
    }

    private static void writeInPieces(OutputStream out, byte[] message, Random random) throws IOException {
        for (int at = 0; at < message.length;) {
            int n = Math.min(message.length - at, 1 + random.nextInt(16 * 1024));
            out.write(message, at, n);
            at += n;
        }
    }
}
