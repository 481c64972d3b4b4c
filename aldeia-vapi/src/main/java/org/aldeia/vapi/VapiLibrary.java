package org.aldeia.vapi;

import com.sun.jna.NativeLibrary;
import java.io.IOException;
import org.aldeia.core.spi.NativeLibraryMissing;

/** Finds a library implementing vapi.h and binds {@link VapiDirect} to it. */
public final class VapiLibrary {

    private VapiLibrary() {
    }

    /**
     * Loads {@code lib<name>.so} (JNA looks at jna.library.path, the classpath resource
     * linux-x86-64/, jna.platform.library.path and the system path) and binds vapi.h to it.
     *
     * @param name the library name without prefix and suffix, e.g. {@code microvapi}
     * @param purpose what it is needed for, for the error, e.g. "socket_type = SOCKET_DECK"
     * @throws NativeLibraryMissing if it cannot be loaded, or lacks a vapi.h function
     * @throws IllegalStateException if this JVM already bound another VAPI library
     */
    public static Vapi load(String name, String purpose) throws IOException {
        NativeLibrary library = open(name, purpose);
        try {
            return VapiDirect.bind(library);
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
