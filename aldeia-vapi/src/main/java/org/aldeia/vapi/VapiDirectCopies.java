package org.aldeia.vapi;

import com.sun.jna.NativeLibrary;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;

/**
 * A further copy of {@link VapiDirect} for each further VAPI library a JVM binds. A class's
 * natives are registered with one library only, and a JVM that chooses a route per peer runs
 * two (libmicrovapi for DECK, libaldeiafabric for a fabric); interface mapping for the second
 * would cost reflection and boxing on every call of its per-write path. So the class's own
 * bytes are defined again, in a loader of their own, whose copy binds the other library; the
 * copy implements the same {@link Vapi} (loaded by the parent), so callers cannot tell.
 */
final class VapiDirectCopies extends ClassLoader {

    private static final String DIRECT = VapiDirect.class.getName();

    private VapiDirectCopies() {
        super(VapiDirect.class.getClassLoader());
    }

    /**
     * Binds {@code library} through a new copy of {@link VapiDirect}.
     *
     * @throws UnsatisfiedLinkError if the library lacks a vapi.h function
     */
    static Vapi bind(NativeLibrary library) {
        try {
            Class<?> copy = new VapiDirectCopies().loadClass(DIRECT);
            return (Vapi) copy.getMethod("bind", NativeLibrary.class).invoke(null, library);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof UnsatisfiedLinkError link) {
                throw link;
            }
            throw new IllegalStateException("binding " + library.getName() + " through a copy of " + DIRECT
                    + " failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("a copy of " + DIRECT + " could not be made: " + e, e);
        }
    }

    /** VapiDirect and its nested classes from their own bytes, here; everything else from the parent. */
    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.equals(DIRECT) && !name.startsWith(DIRECT + "$")) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> loaded = findLoadedClass(name);
            if (loaded == null) {
                String file = name.substring(name.lastIndexOf('.') + 1) + ".class";
                try (InputStream in = VapiDirect.class.getResourceAsStream(file)) {
                    if (in == null) {
                        throw new ClassNotFoundException(name + ": " + file + " is not beside " + DIRECT);
                    }
                    byte[] bytes = in.readAllBytes();
                    loaded = defineClass(name, bytes, 0, bytes.length);
                } catch (IOException e) {
                    throw new ClassNotFoundException(name + ": reading " + file + " failed", e);
                }
            }
            if (resolve) {
                resolveClass(loaded);
            }
            return loaded;
        }
    }
}
