package org.aldeia.deck;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.net.URL;

/**
 * Loads the native libraries of the DECK family through JNA, which finds them in
 * {@code jna.library.path}, the system library path, or on the classpath under
 * {@code linux-x86-64/} (the aldeia-native jar). A failure becomes a {@link DeckLibraryMissing}
 * that names the file and every place JNA looked.
 */
public final class DeckLibraries {

    private DeckLibraries() {
    }

    /**
     * Loads the library {@code name} (e.g. "deck" for libdeck.so).
     *
     * @throws DeckLibraryMissing if JNA cannot find or load it
     */
    public static NativeLibrary load(String name) {
        try {
            return NativeLibrary.getInstance(name, DeckLibraries.class.getClassLoader());
        } catch (UnsatisfiedLinkError e) {
            throw new DeckLibraryMissing(describeMissing(name, e), e);
        }
    }

    /**
     * Loads a library that links against libdeck.so (e.g. "microvapi"), loading libdeck first.
     * The dependent library names libdeck.so by soname only; once JNA has loaded libdeck, the
     * dynamic linker reuses that copy, wherever JNA found (or extracted) it.
     */
    public static NativeLibrary loadAfterDeck(String name) {
        DeckNative.library();
        return load(name);
    }

    private static String describeMissing(String name, UnsatisfiedLinkError e) {
        String file = System.mapLibraryName(name);
        String resource = Platform.RESOURCE_PREFIX + "/" + file;
        ClassLoader loader = DeckLibraries.class.getClassLoader();
        URL onClasspath = loader == null ? null : loader.getResource(resource);
        // Only a library that is there but fails to load needs JNA's own (long) account of why,
        // e.g. a dependency the dynamic linker cannot find; it stays in the cause otherwise.
        String classpath = onClasspath == null
                ? "not on the classpath as " + resource + " (is the aldeia-native jar on the classpath?)"
                : "found on the classpath at " + onClasspath + " but it could not be loaded: " + e.getMessage();
        return "Cannot load native library " + file + ": looked in jna.library.path="
                + valueOrUnset(System.getProperty("jna.library.path"))
                + ", the system library path (LD_LIBRARY_PATH=" + valueOrUnset(System.getenv("LD_LIBRARY_PATH"))
                + ", the ld.so cache, jna.platform.library.path="
                + valueOrUnset(System.getProperty("jna.platform.library.path"))
                + "; java.library.path is not searched by JNA); " + classpath;
    }

    private static String valueOrUnset(String value) {
        return value == null || value.isEmpty() ? "(unset)" : value;
    }
}
