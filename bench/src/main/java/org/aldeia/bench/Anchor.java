package org.aldeia.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reference rows measured in the same run by native tools, when installed: what shared memory
 * gives on this machine without a JVM, so Aldeia's figures have a target next to them. A tool
 * that is not on the PATH gives the row "n/a (install PACKAGE)".
 */
enum Anchor {
    UCX_SHM("UCX shm (ucx_perftest tag_lat/tag_bw)", "ucx_perftest", "ucx-utils", new UcxPerftest()),
    LIBFABRIC_SHM("libfabric shm (fi_pingpong -e rdm)", "fi_pingpong", "libfabric-bin", new FiPingpong("shm")),
    LIBFABRIC_TCP("libfabric tcp;ofi_rxm (fi_pingpong -e rdm)", "fi_pingpong", "libfabric-bin",
            new FiPingpong("tcp;ofi_rxm"));

    /** One anchor tool: all its cells of one run in one placement. */
    interface Tool {
        List<Cell> measureOnce(Placement placement, boolean quick, Path logs) throws IOException, InterruptedException;
    }

    /** How long one tool process may run (the largest cells take well under a second). */
    static final Duration PROCESS_LIMIT = Duration.ofSeconds(60);

    private static final Logger log = LoggerFactory.getLogger(Anchor.class);

    private final String label;
    private final String command;
    private final String debianPackage;
    private final Tool tool;

    Anchor(String label, String command, String debianPackage, Tool tool) {
        this.label = label;
        this.command = command;
        this.debianPackage = debianPackage;
        this.tool = tool;
    }

    String label() {
        return label;
    }

    /** The name on the command line (--only) and in file names, e.g. {@code ucx-shm}. */
    String optionName() {
        return OptionNames.of(this);
    }

    /** After every transport: its place and colour in the table and chart. */
    int order() {
        return Transport.values().length + ordinal();
    }

    /**
     * Ping-pong iterations of a tool for one size: at least 2500, more than ucx_perftest's
     * 2048-sample percentile window, and at most 20 000, so that a cell stays well under a
     * second even when the tools' busy-polling processes share a core with a third process (on
     * this 2-core machine 100 000 round trips then took 25-40 s); fewer with --quick.
     */
    static int iterations(int size, boolean quick) {
        int full = (int) Math.max(2_500, Math.min(20_000, 400_000_000L / Math.max(1, size)));
        return quick ? Math.max(250, full / 10) : full;
    }

    /** This anchor's runs in one placement, to be measured one per round of the bench. */
    Runs runs(Placement placement, boolean quick, Path out) {
        return new Runs(this, placement, quick, out);
    }

    /**
     * One anchor's runs in one placement, one per round ({@link RunRounds}), so that its median
     * takes a run from each of the machine's phases as the transports' medians do. A failure
     * ends the runs and is the row's reason; a tool not on the PATH runs never.
     */
    static final class Runs {
        private final Anchor anchor;
        private final Placement placement;
        private final boolean quick;
        private final Path out;
        private final List<Cell> cells = new ArrayList<>();
        private String failure;

        private Runs(Anchor anchor, Placement placement, boolean quick, Path out) {
            this.anchor = anchor;
            this.placement = placement;
            this.quick = quick;
            this.out = out;
            this.failure = onPath(anchor.command) ? null : "install " + anchor.debianPackage;
        }

        /** Run number {@code run} (from 1), unless an earlier one failed. */
        void measure(int run) throws InterruptedException {
            if (failure != null) {
                return;
            }
            log.info("bench: {}, {}, run {} ...", anchor.label, placement.label(), run);
            try {
                Path logs = Files.createDirectories(out.resolve("bench-runs").resolve(anchor.optionName())
                        .resolve(placement.label() + "-" + run));
                cells.addAll(anchor.tool.measureOnce(placement, quick, logs));
            } catch (IOException e) {
                failure = e.getMessage();
                log.warn("bench: {}, {}: {}", anchor.label, placement.label(), failure);
            }
        }

        Row row() {
            return Row.of(anchor.optionName(), anchor.label, anchor.order(), placement, cells, failure);
        }
    }

    static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && Arrays.stream(path.split(File.pathSeparator))
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, command)));
    }
}
