package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A line under the tables when this machine's kernel has a setting for packing runnable threads
 * onto fewer virtual CPUs ({@code kernel.sched_vcpu_pack}, a setting of some virtual machines'
 * guest kernels; read 15 and, once, 1 on the machines this project is measured on: it changes
 * while they run, so the note quotes it as read at the end). On such a machine free rows are
 * partly measured with both processes on one CPU: perf sched showed a Java ping-pong's two
 * threads on one CPU for 8-20 ms at a time while the other CPU idled, a few times a second,
 * and a hand-off on one CPU costs a context switch (5.0 µs one-way for DECK's own C ping-pong
 * there, 6.8 through Aldeia's streams, against 0.4 and 0.8 on two CPUs). A free row's p99 then
 * says how often that happened during it rather than what the transport does, and the reader
 * should know.
 */
final class SchedulerNote {

    /** Where Linux shows the setting, when the kernel has it. */
    static final Path VCPU_PACK = Path.of("/proc/sys/kernel/sched_vcpu_pack");

    private SchedulerNote() {
    }

    /** The note for this machine, or empty when its kernel has no such setting or it is 0. */
    static Optional<String> describe(Path setting) {
        String value;
        try {
            value = Files.readString(setting).strip();
        } catch (IOException e) {
            return Optional.empty();   // no such setting
        }
        if (value.isEmpty() || value.equals("0")) {
            return Optional.empty();
        }
        return Optional.of("kernel.sched_vcpu_pack = " + value + " (as read now): this virtual machine's kernel may pack "
                + "runnable threads onto\nfewer CPUs. Free rows' two processes were seen (perf sched) sharing one CPU for "
                + "8-20 ms at a time\nwhile the other idled; every hand-off there is a context switch (~5 µs one-way even "
                + "in C), so a\nfree row's p99 says how often that happened during it.\n");
    }
}
