package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import org.junit.jupiter.api.Test;

class JavaNetExceptionsTest {

    @Test
    void aResetReportedByAnNioChannelBecomesTheSocketExceptionJavaNetThrows() {
        IOException reset = new IOException("Connection reset by peer");
        IOException seen = JavaNetExceptions.of(reset);
        assertEquals(SocketException.class, seen.getClass());
        assertEquals("Connection reset by peer", seen.getMessage());
        assertSame(reset, seen.getCause());
    }

    @Test
    void aClosedNioChannelBecomesASocketException() {
        assertEquals(SocketException.class, JavaNetExceptions.of(new ClosedChannelException()).getClass());
    }

    @Test
    void javaNetTypesAndTimeoutsPassUnchanged() {
        IOException unknown = new UnknownHostException("nowhere.invalid");
        IOException timeout = new SocketTimeoutException("Read timed out");
        assertSame(unknown, JavaNetExceptions.of(unknown));
        assertSame(timeout, JavaNetExceptions.of(timeout));
    }

    @Test
    void aProvidersOwnTypeBecomesASocketExceptionWithItAsCause() {
        IOException provider = new IOException("VAPI: queue pair in error") {};
        IOException seen = JavaNetExceptions.of(provider);
        assertEquals(SocketException.class, seen.getClass());
        assertSame(provider, seen.getCause());
    }
}
