package org.aldeia.deck;

import java.io.IOException;

/**
 * A DECK call returned an error code. The message names the C function, the code (its deck.h
 * name and what {@code deck_strerror} says of it) and {@code deck_last_error} of the calling
 * thread, e.g. "deck_msg_unpack failed with DECK_ERANGE (past the end of the message):
 * deck_msg_unpack: 4 bytes of type 5 asked, 0 left".
 */
public final class DeckException extends IOException {

    private static final long serialVersionUID = 1L;

    /* The DECK_E* names of deck.h, indexed by -code. */
    private static final String[] CODE_NAMES = {
        "DECK_OK", "DECK_EINVAL", "DECK_ENOMEM", "DECK_ESTATE", "DECK_ENOTFOUND", "DECK_EEXIST",
        "DECK_EIO", "DECK_EPEER", "DECK_ETRUNC", "DECK_ERANGE", "DECK_ECONFIG", "DECK_ETIMEDOUT",
        "DECK_ECLOSED",
    };

    private final String function;
    private final int code;

    /**
     * @param description what deck_strerror says of the code
     * @param detail      deck_last_error of the calling thread
     */
    DeckException(String function, int code, String description, String detail) {
        super(function + " failed with " + codeName(code) + " (" + description + "): " + detail);
        this.function = function;
        this.code = code;
    }

    /** The C function that failed, e.g. {@code deck_mbox_post}. */
    public String function() {
        return function;
    }

    /** The name of a DECK result code, e.g. "DECK_ERANGE". */
    public static String codeName(int code) {
        return code <= 0 && -code < CODE_NAMES.length ? CODE_NAMES[-code] : "DECK error " + code;
    }

    /** The negative {@code DECK_E*} code it returned. */
    public int code() {
        return code;
    }
}
