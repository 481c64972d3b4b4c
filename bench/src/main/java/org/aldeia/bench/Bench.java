package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.aldeia.core.config.AldeiaConfiguration;

import org.aldeia.deck.DeckLauncher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ./aldeia bench}: for each {@link Transport} and {@link Placement}, {@code --runs} times
 * (in rounds: {@link RunRounds}; each round ends with a run of every anchor tool), a server JVM
 * and a client JVM on this machine (a 2-node run of {@link DeckLauncher}, which also gives the
 * static DECK rows their nodes file); then the tables on stdout, {@code bench-results.csv} and
 * {@code bench-results.png} in the output directory. Each figure is the median across the runs.
 * A transport that cannot run becomes an "n/a (reason)" row.
 *
 * <pre>Bench [--quick] [--runs N] [--placement free|pinned|both] [--pin] [--out DIR] [--only name,name,...]</pre>
 *
 * <p>Pinned runs the server on core 0 and the client on core 1 (taskset), the placement where
 * every wake-up crosses cores; free lets the scheduler place both. {@code --pin} is
 * {@code --placement pinned}.
 */
public final class Bench {

    private static final Logger log = LoggerFactory.getLogger(Bench.class);
    private static final String USAGE = "usage: Bench [--quick] [--runs N] [--placement free|pinned|both|hosts|all] [--pin]"
            + " [--out DIR] [--only " + String.join(",", Selection.names()) + "]";

    private Bench() {
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        try {
            BenchArguments arguments = BenchArguments.parse(args);
            boolean quick = arguments.flag("quick");
            List<Placement> placements = arguments.flag("pin") ? List.of(Placement.PINNED)
                    : Placement.parse(arguments.value("placement", "both"));
            int runs = runs(arguments.value("runs", quick ? "1" : "3"));
            Path out = Files.createDirectories(Path.of(arguments.value("out", "bench/target")).toAbsolutePath());
            Selection selection = Selection.parse(arguments.value("only", null));
            List<Row> rows = new ArrayList<>();
            List<Slot> slots = new ArrayList<>();
            for (Transport transport : selection.transports()) {
                for (Placement placement : placements) {
                    if (placement != Placement.HOSTS || transport.crossesHosts()) {
                        slots.add(new Slot(transport, placement));
                    }
                }
            }
            List<Anchor.Runs> anchorRuns = new ArrayList<>();
            for (Anchor anchor : selection.anchors()) {
                for (Placement placement : placements) {
                    if (placement != Placement.HOSTS) { // the anchors' tools run on one host
                        anchorRuns.add(anchor.runs(placement, quick, out));
                    }
                }
            }
            try (Hosts hosts = new Hosts(placements.contains(Placement.HOSTS))) {
                List<Slot> runnable = slots.stream()
                        .filter(slot -> slot.placement() != Placement.HOSTS || hosts.failure() == null).toList();
                Map<Slot, List<TransportResult>> results = RunRounds.run(runnable, runs, (slot, number) -> run(
                        slot.transport(), slot.placement(), slot.placement() == Placement.HOSTS ? hosts.hosts() : null,
                        number, out, quick), number -> {
                            for (Anchor.Runs anchor : anchorRuns) {
                                anchor.measure(number);
                            }
                        });
                for (Slot slot : slots) {
                    Transport transport = slot.transport();
                    rows.add(results.containsKey(slot) ? Row.of(transport, slot.placement(), results.get(slot))
                            : Row.of(transport.optionName(), transport.label(), transport.ordinal(), slot.placement(),
                                    List.of(), hosts.failure()));
                }
            }
            anchorRuns.forEach(anchor -> rows.add(anchor.row()));
            System.out.println();
            System.out.print(ResultTable.render(rows, BenchClient.SIZES));
            SchedulerNote.describe(SchedulerNote.VCPU_PACK).ifPresent(System.out::print);
            Path csv = out.resolve("bench-results.csv");
            Path png = out.resolve("bench-results.png");
            ResultsCsv.write(rows, csv);
            ResultsChart.write(rows, BenchClient.SIZES, png);
            System.out.println("CSV: " + csv);
            System.out.println("chart: " + png);
            System.out.println("each transport's logs: " + out.resolve("bench-runs"));
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
        } catch (Exception e) {
            log.error("bench failed: {}", e.toString());
            log.debug("failure detail", e);
            System.exit(1);
        }
    }

    /** One transport in one placement: a row of the tables. */
    private record Slot(Transport transport, Placement placement) {
    }

    static int runs(String option) {
        try {
            int runs = Integer.parseInt(option);
            if (runs >= 1) {
                return runs;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--runs must be a whole number of at least 1, not '" + option + "'");
    }

    /**
     * The emulated hosts of the {@link Placement#HOSTS} rows, made once when a row needs them;
     * why they cannot be made here becomes those rows' reason instead of failing the bench.
     */
    private static final class Hosts implements AutoCloseable {
        private EmulatedHosts hosts;
        private String failure;

        Hosts(boolean wanted) throws InterruptedException {
            if (!wanted) {
                return;
            }
            try {
                hosts = EmulatedHosts.up();
            } catch (IOException e) {
                log.warn("bench: the {} placement is n/a: {}", Placement.HOSTS.label(), e.getMessage());
                failure = e.getMessage();
            }
        }

        EmulatedHosts hosts() {
            return hosts;
        }

        /** Why there are no hosts, or null. */
        String failure() {
            return failure;
        }

        @Override
        public void close() throws IOException {
            if (hosts != null) {
                hosts.close();
            }
        }
    }

    /** Runs one transport's two JVMs once; a failure becomes the result's reason, never an exception. */
    static TransportResult run(Transport transport, Placement placement, EmulatedHosts hosts, int number, Path out,
            boolean quick) throws IOException, InterruptedException {
        Path dir = out.resolve("bench-runs").resolve(transport.optionName()).resolve(placement.label() + "-" + number);
        Files.createDirectories(dir);
        Path rendezvous = dir.resolve("server.address");
        Files.deleteIfExists(rendezvous);
        Path scratch = scratchDirectory(transport);
        log.info("bench: {}, {}, run {} ...", transport.label(), placement.label(), number);
        try {
            List<String> args = new ArrayList<>(List.of("--transport", transport.optionName(),
                    "--rendezvous", rendezvous.toString(), "--scratch", scratch.toString()));
            if (quick) {
                args.add("--quick");
            }
            DeckLauncher launcher = new DeckLauncher(2, BenchNode.class, args.toArray(String[]::new))
                    .jvmOptions(transport.jvmOptions().toArray(String[]::new))
                    .timeout(quick ? Duration.ofSeconds(90) : Duration.ofMinutes(4))
                    .workDir(dir);
            if (placement.cpus().length > 0) {
                launcher.pinned(placement.cpus());
            }
            if (hosts != null) {
                // The client reaches the server at host A's address, RMI's stubs name it too.
                launcher.nodePrefix(0, hosts.prefix(0)).nodePrefix(1, hosts.prefix(1))
                        .nodeAddress(0, hosts.address(0)).nodeAddress(1, hosts.address(1))
                        .jvmOptions("-D" + PhaseListener.SERVER_PROPERTY + "=" + EmulatedHosts.SERVER_ADDRESS,
                                "-Djava.rmi.server.hostname=" + EmulatedHosts.SERVER_ADDRESS);
            }
            // Static DECK rows: each JVM gets its aldeia-<i>.conf with the row's DECK transport;
            // dynamic rows with settings share one aldeia.conf.
            DeckLauncher.Result run;
            if (transport.staticDeckTransport() == null) {
                if (!transport.dynamicConfiguration().isEmpty()) {
                    launcher.jvmOptions("-D" + AldeiaConfiguration.PROPERTY + "=" + dynamicConfiguration(transport, dir));
                }
                run = launcher.launch();
            } else {
                launcher.aldeiaSetting("deck_transport", transport.staticDeckTransport());
                transport.aldeiaSettings().forEach(launcher::aldeiaSetting);
                run = launcher.launchAldeia();
            }
            List<Measurement> measurements = run.output(1).lines()
                    .map(Measurement::parse).flatMap(Optional::stream).toList();
            String failure = run.succeeded() ? null : failureReason(run);
            if (failure != null) {
                log.warn("bench: {}, {}: n/a ({}); logs in {}", transport.label(), placement.label(), failure, dir);
            }
            return new TransportResult(transport, measurements, failure);
        } finally {
            deleteRecursively(scratch);
        }
    }

    /** Writes the aldeia.conf both JVMs of a dynamic row read. */
    private static Path dynamicConfiguration(Transport transport, Path dir) throws IOException {
        return Files.write(dir.resolve("aldeia.conf"), transport.dynamicConfiguration());
    }

    /**
     * Where a run keeps its Unix socket file or Aeron's directory: under /dev/shm when there is
     * one (Aeron's log buffers are memory-mapped files; tmpfs keeps them off the disk), else the
     * temporary directory. Short, so a Unix socket path stays under the 108-byte limit.
     */
    private static Path scratchDirectory(Transport transport) throws IOException {
        Path shm = Path.of("/dev/shm");
        String prefix = "aldeia-bench-" + transport.optionName() + "-";
        return Files.isDirectory(shm) && Files.isWritable(shm)
                ? Files.createTempDirectory(shm, prefix) : Files.createTempDirectory(prefix);
    }

    /**
     * The most telling line of the two JVMs' output: the first ERROR line, else the first line of
     * an uncaught throwable (an Error such as NoClassDefFoundError is not logged), else how they ended.
     */
    static String failureReason(DeckLauncher.Result run) throws IOException {
        for (int node = 0; node < 2; node++) {
            Optional<String> error = run.output(node).lines()
                    .filter(line -> line.contains(" ERROR ") || line.startsWith("Exception in thread ")).findFirst();
            if (error.isPresent()) {
                String line = error.get();
                int message = line.indexOf(" - ");
                return (node == 0 ? "server: " : "client: ") + (message >= 0 ? line.substring(message + 3) : line).trim();
            }
        }
        return run.timedOut() ? "timed out" : "exit statuses " + Arrays.toString(run.exitCodes());
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
