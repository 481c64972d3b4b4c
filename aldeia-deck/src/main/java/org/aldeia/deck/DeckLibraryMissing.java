package org.aldeia.deck;

/**
 * A native library of the DECK family (libdeck.so, or one that needs it such as
 * libmicrovapi.so) could not be loaded. Unchecked: nothing in the program can work around a
 * missing library, and the message says where JNA looked so the user can fix the setup.
 */
public final class DeckLibraryMissing extends RuntimeException {

    private static final long serialVersionUID = 1L;

    DeckLibraryMissing(String message, Throwable cause) {
        super(message, cause);
    }
}
