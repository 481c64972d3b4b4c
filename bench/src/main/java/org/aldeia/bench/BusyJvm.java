package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The third JVM of the application phase: another program on the machine that wants a core,
 * as a cluster node runs more than one job. One thread computes without pause until its parent
 * closes its standard input (or dies), so it never outlives the benchmark.
 */
public final class BusyJvm {

    /** Where Linux lists the CPUs that are online, e.g. "0-1". */
    private static final Path ONLINE_CPUS = Path.of("/sys/devices/system/cpu/online");

    private BusyJvm() {
    }

    public static void main(String[] args) throws IOException {
        Thread worker = new Thread(BusyJvm::compute, "busy");
        worker.setDaemon(true);
        worker.start();
        while (System.in.read() >= 0) {
            // the parent never writes; end of input means it is done or gone
        }
        System.exit(0);
    }

    /** Arithmetic with a result the JIT cannot drop (it is printed if it ever hits a value). */
    private static void compute() {
        long x = 1;
        while (true) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            if (x == 42) {
                System.out.println(x);
            }
        }
    }

    /**
     * Starts the busy JVM with this JVM's classpath. It may run on every online CPU: a pinned
     * client's affinity would otherwise be inherited and the busy JVM would compete with the
     * client alone.
     */
    static Process start() throws IOException {
        List<String> command = new ArrayList<>();
        if (Files.isReadable(ONLINE_CPUS) && Files.isExecutable(Path.of("/usr/bin/taskset"))) {
            command.addAll(List.of("/usr/bin/taskset", "-c", Files.readString(ONLINE_CPUS).trim()));
        }
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), BusyJvm.class.getName()));
        return new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** Ends the busy JVM: end of input, then a kill if it is still there a second later. */
    static void stop(Process busy) throws InterruptedException {
        try {
            busy.getOutputStream().close();
        } catch (IOException e) {
            // it is gone already; destroy below is harmless
        }
        if (!busy.waitFor(1, java.util.concurrent.TimeUnit.SECONDS)) {
            busy.destroyForcibly().waitFor();
        }
    }
}
