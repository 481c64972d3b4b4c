package org.aldeia.core;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketException;
import org.aldeia.core.config.AldeiaConfigurationException;
import org.aldeia.core.spi.NativeLibraryMissing;

/**
 * Keeps the exception types of the layers below (a provider's, such as VAPI's or DECK's) from
 * reaching the application: code written for java.net catches what the JDK's sockets throw,
 * so such a failure becomes the SocketException the JDK throws when a socket operation fails,
 * with the original as its cause and its message unchanged. Every public method of Aldeia's
 * sockets and streams that reaches a provider passes its IOExceptions through here; aldeia-core
 * cannot name the providers' types, so it keeps what it knows instead: java.net's types, timeouts
 * and interrupts, and aldeia-core's own, which say what the user must fix (configuration,
 * missing library). The other java.* types become SocketExceptions too: an NIO channel reports a
 * reset or a broken pipe with a bare IOException and a close with ClosedChannelException, where
 * java.net's sockets throw SocketException.
 */
final class JavaNetExceptions {

    private JavaNetExceptions() {}

    static IOException of(IOException e) {
        if (e instanceof SocketException || e instanceof InterruptedIOException
                || e instanceof AldeiaConfigurationException || e instanceof NativeLibraryMissing
                || e.getClass().getName().startsWith("java.net.")) {
            return e;
        }
        return withCause(new SocketException(e.getMessage()), e);
    }

    /**
     * A stream operation that failed because another thread closed the socket under it (the
     * channel then fails however its provider does): java.net's "Socket closed".
     */
    static IOException ofStream(IOException e, boolean socketClosed) {
        return socketClosed && !(e instanceof SocketException) ? socketClosed(e) : of(e);
    }

    static SocketException socketClosed(IOException cause) {
        return withCause(new SocketException("Socket closed"), cause);
    }

    private static SocketException withCause(SocketException e, IOException cause) {
        e.initCause(cause);
        return e;
    }
}
