package org.aldeia.bench;

import com.sun.jna.Library;
import com.sun.jna.Native;

/**
 * This JVM's user + sys CPU time, every thread's (Java, JIT, GC and native threads such as
 * DECK's) included. Read with clock_gettime(CLOCK_PROCESS_CPUTIME_ID), which counts in
 * nanoseconds: the JDK's OperatingSystemMXBean.getProcessCpuTime() uses times() on Linux and
 * moves in 10 ms ticks, too coarse for a phase of well under a second.
 */
final class ProcessCpu {

    /** Linux's clock id for the CPU time of the calling process. */
    private static final int CLOCK_PROCESS_CPUTIME_ID = 2;

    private interface LibC extends Library {
        /** {@code timespec} is {tv_sec, tv_nsec}: two 64-bit words on 64-bit Linux. */
        int clock_gettime(int clockId, long[] timespec);
    }

    private static final LibC LIBC = Native.load("c", LibC.class);

    private ProcessCpu() {
    }

    /** CPU nanoseconds this process has used so far. */
    static long nanos() {
        long[] timespec = new long[2];
        if (LIBC.clock_gettime(CLOCK_PROCESS_CPUTIME_ID, timespec) != 0) {
            throw new IllegalStateException("clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed, errno " + Native.getLastError());
        }
        return timespec[0] * 1_000_000_000L + timespec[1];
    }
}
