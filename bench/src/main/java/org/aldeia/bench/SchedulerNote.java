package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A line under the tables when this machine's kernel packs runnable threads onto fewer virtual
 * CPUs (the {@code kernel.sched_vcpu_pack} setting of some virtual machines' guest kernels,
 * 15 on the machines this project is measured on). Free rows are then partly measured with
 * both processes on one CPU: perf sched showed a Java ping-pong's two threads on one CPU for
 * 8-20 ms at a time while the other CPU idled, a few times a second, and a hand-off on one
 * CPU costs a context switch (5.0 µs one-way for DECK's own C ping-pong there, 6.8 through
 * Aldeia's streams, against 0.4 and 0.8 on two CPUs). A free row's p99 then says how often
 * that happened during it rather than what the transport does, and the reader should know.
 */
final class SchedulerNote {

    /** Where Linux shows the setting, when the kernel has it. */
    static final Path VCPU_PACK = Path.of("/proc/sys/kernel/sched_vcpu_pack");

    private SchedulerNote() {
    }

    /** The note for this machine, or empty when its kernel does not pack (or says nothing). */
    static Optional<String> describe(Path setting) {
        String value;
        try {
            value = Files.readString(setting).strip();
        } catch (IOException e) {
            return Optional.empty();   // no such setting: a kernel that does not pack
        }
        if (value.isEmpty() || value.equals("0")) {
            return Optional.empty();
        }
        return Optional.of("kernel.sched_vcpu_pack = " + value + ": this kernel packs runnable threads onto fewer CPUs. In the "
                + "free rows the two\nprocesses sometimes share one CPU for milliseconds, where every hand-off is a "
                + "context switch (~5 µs\none-way even in C): a free row's p99 shows how often that happened during it.\n");
    }
}
