package org.aldeia.lowerlayer;

import java.io.IOException;

/**
 * Stands for the exception types of the layers under aldeia-core (VapiException, DeckException):
 * an IOException of a package aldeia-core does not know.
 */
public final class LowerLayerException extends IOException {
    private static final long serialVersionUID = 1L;

    public LowerLayerException(String message) {
        super(message);
    }
}
