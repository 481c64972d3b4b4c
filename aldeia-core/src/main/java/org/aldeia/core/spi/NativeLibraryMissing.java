package org.aldeia.core.spi;

import java.io.IOException;

/**
 * The one error every provider raises when its native library cannot be loaded: it names the
 * library and every place that was searched, so a user can fix the installation without
 * reading a JNA stack trace (the most common complaint about SDP, JSOR and rsockets).
 */
public final class NativeLibraryMissing extends IOException {
    private static final long serialVersionUID = 1L;

    private final String library;

    /**
     * @param library the file name, e.g. {@code libmicrovapi.so}
     * @param purpose what it is needed for, e.g. "socket_type = SOCKET_VAPI"
     * @param cause what the loader said (it lists the paths it tried)
     */
    public NativeLibraryMissing(String library, String purpose, Throwable cause) {
        super(library + " (needed for " + purpose + ") could not be loaded; looked in "
                + searchPath(library) + (cause == null ? "" : ": " + cause.getMessage()), cause);
        this.library = library;
    }

    /** For {@link #dependencyMissing}: the message is given whole. */
    private NativeLibraryMissing(String library, Throwable cause, String message) {
        super(message, cause);
        this.library = library;
    }

    /**
     * For a library that was found but does not load because a library it needs is not
     * installed: then where {@code library} was searched does not help, and {@code message}
     * says instead which library is missing, where the dynamic linker looked and what to install.
     */
    public static NativeLibraryMissing dependencyMissing(String library, String message, Throwable cause) {
        return new NativeLibraryMissing(library, cause, message);
    }

    public String library() {
        return library;
    }

    /** The places JNA searches, in its order (JNA does not look at java.library.path). */
    static String searchPath(String library) {
        return "jna.library.path=" + orUnset(System.getProperty("jna.library.path"))
                + ", the system library path (LD_LIBRARY_PATH=" + orUnset(System.getenv("LD_LIBRARY_PATH"))
                + ", the ld.so cache), jna.platform.library.path="
                + orUnset(System.getProperty("jna.platform.library.path"))
                + ", and the classpath resource linux-x86-64/" + library;
    }

    private static String orUnset(String value) {
        return value == null || value.isEmpty() ? "(unset)" : value;
    }
}
