package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.NativeLibrary;
import org.junit.jupiter.api.Test;

class DeckLibrariesTest {

    @Test
    void missingLibraryNamesTheFileAndWhereJnaLooked() {
        DeckLibraryMissing e = assertThrows(DeckLibraryMissing.class,
                () -> DeckLibraries.load("aldeia_no_such_library"));
        String message = e.getMessage();
        assertTrue(message.contains("libaldeia_no_such_library.so"), message);
        assertTrue(message.contains("jna.library.path"), message);
        assertTrue(message.contains("LD_LIBRARY_PATH"), message);
        assertTrue(message.contains("linux-x86-64/libaldeia_no_such_library.so"), message);
        assertTrue(message.contains("java.library.path"), message);
        assertTrue(e.getCause() instanceof UnsatisfiedLinkError);
    }

    @Test
    void libdeckLoadsFromTheClasspath() {
        assertNotNull(DeckNative.library().getFunction("deck_msg_create"));
    }

    /* libmicrovapi.so needs libdeck.so by soname. Extracted from the aldeia-native jar to a
     * temporary file it has no libdeck beside it: it loads only because the dynamic linker
     * reuses the copy of libdeck that JNA loaded first. */
    @Test
    void microvapiLoadsOnceLibdeckIsLoaded() {
        NativeLibrary microvapi = DeckLibraries.loadAfterDeck("microvapi");
        assertNotNull(microvapi.getFunction("VAPI_strerror"));
    }
}
