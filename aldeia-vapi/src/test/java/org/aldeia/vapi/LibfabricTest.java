package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.aldeia.core.spi.NativeLibraryMissing;
import org.junit.jupiter.api.Test;

/**
 * The error when libfabric itself is not installed, composed from what JNA says when
 * libaldeiafabric.so's dependency is missing, so nothing is uninstalled here. The text below is
 * JNA 5.14's, captured from a library linked against a stand-in libfabric.so.99 that was then
 * removed (with the version changed to libfabric's and the class path shortened).
 */
class LibfabricTest {

    private static final String JNA_SAYS = "Unable to load library 'aldeiafabric':\n"
            + "libfabric.so.1: cannot open shared object file: No such file or directory\n"
            + "libfabric.so.1: cannot open shared object file: No such file or directory\n"
            + "Native library (linux-x86-64/libaldeiafabric.so) not found in resource path (/a.jar:/b.jar)";

    private static NativeLibraryMissing loaderFailure(String said) {
        return new NativeLibraryMissing("libaldeiafabric.so", "socket_type = SOCKET_VAPI", new UnsatisfiedLinkError(said));
    }

    @Test
    void aMissingLibfabricIsNamedWithWhereTheLinkerLookedAndThePackageToInstall() {
        NativeLibraryMissing jna = loaderFailure(JNA_SAYS);
        NativeLibraryMissing e = Libfabric.explainMissing(jna, "/opt/ofi/lib:/usr/local/lib");
        assertEquals("libaldeiafabric.so (needed for socket_type = SOCKET_VAPI) needs libfabric.so.1, libfabric's "
                + "library, which the dynamic linker did not find in LD_LIBRARY_PATH=/opt/ofi/lib:/usr/local/lib, the "
                + "ld.so cache (/etc/ld.so.cache: `ldconfig -p | grep libfabric` lists what it has) or the system's "
                + "default library directories; install libfabric (Debian/Ubuntu: apt-get install libfabric1; "
                + "RHEL/Fedora: dnf install libfabric). The linker said: libfabric.so.1: cannot open shared object "
                + "file: No such file or directory", e.getMessage());
        assertEquals("libaldeiafabric.so", e.library());
        assertSame(jna.getCause(), e.getCause(), "JNA's whole text stays in the cause");
    }

    @Test
    void anUnsetLdLibraryPathIsSaidToBeUnset() {
        assertTrue(Libfabric.explainMissing(loaderFailure(JNA_SAYS), null).getMessage()
                .contains("LD_LIBRARY_PATH=(unset), the ld.so cache"));
        assertTrue(Libfabric.explainMissing(loaderFailure(JNA_SAYS), "").getMessage()
                .contains("LD_LIBRARY_PATH=(unset), the ld.so cache"));
    }

    @Test
    void anotherSonameIsNamedAsTheLinkerNamedIt() {
        NativeLibraryMissing e = Libfabric.explainMissing(
                loaderFailure("libfabric.so.2: cannot open shared object file: No such file or directory"), null);
        assertTrue(e.getMessage().contains("needs libfabric.so.2, libfabric's library"), e.getMessage());
    }

    @Test
    void onlyLibfabricsAbsenceIsExplainedSo() {
        NativeLibraryMissing absent = loaderFailure("Unable to load library 'aldeiafabric':\n"
                + "libaldeiafabric.so: cannot open shared object file: No such file or directory");
        assertSame(absent, Libfabric.explainMissing(absent, null));
        NativeLibraryMissing noCause = new NativeLibraryMissing("libaldeiafabric.so", "x", null);
        assertSame(noCause, Libfabric.explainMissing(noCause, null));
    }
}
