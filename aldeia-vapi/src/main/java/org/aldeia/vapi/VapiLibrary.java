package org.aldeia.vapi;

import com.sun.jna.NativeLibrary;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.aldeia.core.spi.NativeLibraryMissing;

/** Finds a library implementing vapi.h and binds {@link VapiDirect} (or a copy of it) to it. */
public final class VapiLibrary {

    /** The libraries bound in this JVM, by name: the first through VapiDirect, the others through copies. */
    private static final Map<String, Vapi> BOUND = new HashMap<>();

    private VapiLibrary() {
    }

    /**
     * Loads {@code lib<name>.so} (JNA looks at jna.library.path, the classpath resource
     * linux-x86-64/, jna.platform.library.path and the system path) and binds vapi.h to it.
     *
     * @param name the library name without prefix and suffix, e.g. {@code microvapi}
     * @param purpose what it is needed for, for the error, e.g. "socket_type = SOCKET_DECK"
     * @return the binding; the same for the same library
     * @throws NativeLibraryMissing if it cannot be loaded, or lacks a vapi.h function
     */
    public static synchronized Vapi load(String name, String purpose) throws IOException {
        Vapi bound = BOUND.get(name);
        if (bound != null) {
            return bound;
        }
        NativeLibrary library = open(name, purpose);
        try {
            Vapi vapi = BOUND.isEmpty() ? VapiDirect.bind(library) : VapiDirectCopies.bind(library);
            BOUND.put(name, vapi);
            return vapi;
        } catch (UnsatisfiedLinkError e) {
            throw new NativeLibraryMissing(fileName(name), purpose + "; it does not implement vapi.h", e);
        }
    }

    /** Whether {@code lib<name>.so} can be loaded; binds nothing. */
    public static boolean isLoadable(String name) {
        try {
            NativeLibrary.getInstance(name);
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    /** {@code lib<name>.so} on Linux. */
    public static String fileName(String name) {
        return System.mapLibraryName(name);
    }

    private static NativeLibrary open(String name, String purpose) throws NativeLibraryMissing {
        try {
            return NativeLibrary.getInstance(name);
        } catch (UnsatisfiedLinkError e) {
            throw new NativeLibraryMissing(fileName(name), purpose, e);
        }
    }
}
