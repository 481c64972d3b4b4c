package org.aldeia.vapi;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.NativeLibraryMissing;

/**
 * What loading libaldeiafabric.so takes from the libfabric below it: a process environment in
 * which libfabric's dependencies leave the JVM's signal handlers alone, and, when libfabric
 * itself is not installed, an error that says so rather than JNA's list of where it looked for
 * libaldeiafabric.so (which it found).
 */
final class Libfabric {

    /** The library's name as the dynamic linker reports it missing: "libfabric.so.1". */
    private static final Pattern MISSING = Pattern.compile("libfabric\\.so[.0-9]*");

    private Libfabric() {
    }

    /**
     * libfabric as Debian and others build it links the PSM libraries of Intel's old
     * InfiniPath and Omni-Path adapters, and libpsm_infinipath installs a SIGSEGV handler when it
     * is loaded, unless IPATH_NO_BACKTRACE is set then. The JVM takes SIGSEGV on purpose (implicit
     * null checks, safepoint polls): with that handler in place the first null check of compiled
     * code killed the JVM (measured: a JVM that loads libfabric.so.1 and then catches
     * NullPointerExceptions in a loop dies with "terminated with signal 11" and a .btr file; with
     * the variable set it runs). So it is set, with libpsm2's equivalent, in this process's
     * environment before the library and libfabric load; a value the user set is kept.
     */
    static void keepTheJvmsSignalHandlers() {
        Function setenv = NativeLibrary.getInstance(Platform.C_LIBRARY_NAME).getFunction("setenv");
        for (String variable : new String[] {"IPATH_NO_BACKTRACE", "HFI_NO_BACKTRACE"}) {
            setenv.invokeInt(new Object[] {variable, "1", 0});
        }
    }

    /**
     * {@code e} itself, unless what could not be loaded is libfabric (libaldeiafabric.so loads
     * only with libfabric.so.1 beside it): then an error naming libfabric, where the dynamic
     * linker looked for it and the package to install, and quoting the linker.
     *
     * @param ldLibraryPath the value of LD_LIBRARY_PATH (null: unset), a parameter for the tests
     */
    static NativeLibraryMissing explainMissing(NativeLibraryMissing e, String ldLibraryPath) {
        String linker = linkerLine(e.getCause());
        if (linker == null) {
            return e;
        }
        Matcher name = MISSING.matcher(linker);
        name.find();
        return NativeLibraryMissing.dependencyMissing(e.library(), e.library() + " (needed for socket_type = "
                + AldeiaConfiguration.SOCKET_VAPI + ") needs " + name.group() + ", libfabric's library, which the "
                + "dynamic linker did not find in LD_LIBRARY_PATH="
                + (ldLibraryPath == null || ldLibraryPath.isEmpty() ? "(unset)" : ldLibraryPath)
                + ", the ld.so cache (/etc/ld.so.cache: `ldconfig -p | grep libfabric` lists what it has) or the "
                + "system's default library directories; install libfabric (Debian/Ubuntu: apt-get install "
                + "libfabric1; RHEL/Fedora: dnf install libfabric). The linker said: " + linker, e.getCause());
    }

    /** The line of the loader's message that names libfabric.so, or null. */
    private static String linkerLine(Throwable cause) {
        String said = cause == null || cause.getMessage() == null ? "" : cause.getMessage();
        return said.lines().filter(line -> MISSING.matcher(line).find()).findFirst().map(String::strip).orElse(null);
    }
}
