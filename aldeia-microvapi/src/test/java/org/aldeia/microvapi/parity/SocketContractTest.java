package org.aldeia.microvapi.parity;

import static org.aldeia.microvapi.parity.FarEnd.Scenario.DRAIN;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.ECHO;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.READ_TO_EOF_THEN_REPLY;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.SEND_GREETING_THEN_CLOSE;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.STALL;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.aldeia.microvapi.FabricLibrary;
import org.aldeia.microvapi.TestLoopback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The behaviour of java.net's socket API, checked identically against every {@link SocketKind}
 * of this run: the JDK's sockets are the reference, Aldeia's must behave the same. The kinds
 * come from the system property {@value #KINDS_PROPERTY} (default: all); the Aldeia transport
 * is whatever this JVM's configuration selects, so the build runs this class once per
 * transport (see the surefire executions of this module), and over IPv6 loopback as well as
 * IPv4 ({@link TestLoopback}). The far end of every connection is a {@link FarEnd} JVM of the
 * same kind.
 *
 * <p>Where Aldeia inherently differs from TCP, nothing here tests it: a write returns once the
 * bytes are posted, not once the kernel holds them, and a peer that closes with unread data
 * is not reported to the writer.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class SocketContractTest {

    static final String KINDS_PROPERTY = "aldeia.parity.kinds";

    /** 127.0.0.1, or ::1 in the build's IPv6 executions ({@link TestLoopback}). */
    private static final InetAddress LOOPBACK = TestLoopback.address();
    /** Long enough for the far end to reach a blocking call, short enough to keep the suite quick. */
    private static final int SHORT_TIMEOUT_MILLIS = 200;
    /** How long a blocked call may take to notice a close and still count as prompt. */
    private static final long PROMPT_SECONDS = 2;

    private static final FarEnds FAR_ENDS = new FarEnds();

    static Stream<SocketKind> kinds() {
        return Arrays.stream(System.getProperty(KINDS_PROPERTY, "JDK,ALDEIA").split(","))
                .map(String::trim).map(SocketKind::valueOf);
    }

    static Stream<Arguments> kindsWithAndWithoutTimeout() {
        return kinds().flatMap(kind -> Stream.of(Arguments.of(kind, 0), Arguments.of(kind, 30_000)));
    }

    private static FarEndProcess farEnd(SocketKind kind) throws IOException {
        return FAR_ENDS.of(kind);
    }

    @BeforeAll
    static void skipWithoutTheLoopbackAddressOrTheTransport() throws IOException {
        TestLoopback.assumeUsable(LOOPBACK);
        FabricLibrary.assumeBuiltIfConfigured();
    }

    @AfterAll
    static void stopFarEnds() throws InterruptedException {
        FAR_ENDS.stopAll();
    }

    // ---- connect ----

    @ForEachKind
    void connectToAClosedPortThrowsConnectExceptionAndClosesTheSocket(SocketKind kind) throws IOException {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            closedPort = probe.getLocalPort();
        }
        assertThrows(ConnectException.class, () -> kind.connectedSocket(LOOPBACK, closedPort));
        Socket socket = kind.newSocket();
        assertThrows(ConnectException.class, () -> socket.connect(new InetSocketAddress(LOOPBACK, closedPort)));
        assertUnusableAfterAFailedConnect(socket);
    }

    /**
     * A failed connect leaves the socket unusable. Whether isClosed() says so changed in JDK 20
     * (before: false), so only what holds for every JDK is checked.
     */
    private static void assertUnusableAfterAFailedConnect(Socket socket) throws IOException {
        assertFalse(socket.isConnected());
        try (ServerSocket listening = new ServerSocket(0, 1, LOOPBACK)) {
            assertThrows(SocketException.class, () -> socket.connect(listening.getLocalSocketAddress()));
        }
        socket.close();
    }

    /**
     * The listener that never answers is a plain NIO channel whatever the kind: a server socket
     * that looks at its clients (an installed one under a bind rule) takes connections off the
     * kernel's queue in the background, so its queue fills at a moment this test cannot know.
     */
    @ForEachKind
    void connectTimesOutWhenThePeerNeverAnswers(SocketKind kind) throws IOException {
        try (ServerSocketChannel full = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0), 1)) {
            List<Socket> queued = fillBacklog(full.getLocalAddress());
            try {
                Socket socket = kind.newSocket();
                long start = System.nanoTime();
                assertThrows(SocketTimeoutException.class,
                        () -> socket.connect(full.getLocalAddress(), SHORT_TIMEOUT_MILLIS));
                assertTrue(millisSince(start) >= SHORT_TIMEOUT_MILLIS - 50, "timed out too early");
                assertUnusableAfterAFailedConnect(socket);
            } finally {
                for (Socket socket : queued) {
                    socket.close();
                }
            }
        }
    }

    /** Linux drops SYNs to a listener whose accept queue is full, so a connect then times out. */
    private static List<Socket> fillBacklog(SocketAddress server) throws IOException {
        List<Socket> queued = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Socket socket = new Socket();
            try {
                socket.connect(server, SHORT_TIMEOUT_MILLIS);
                queued.add(socket);
            } catch (SocketTimeoutException full) {
                socket.close();
                return queued;
            }
        }
        fail("the backlog of a listener that never accepts did not fill with " + queued.size() + " connections");
        return queued;
    }

    @ForEachKind
    void aSecondConnectAndABindAfterConnectThrowSocketException(SocketKind kind) throws IOException {
        try (FarEndProcess.Request echo = farEnd(kind).listen(ECHO)) {
            int port = echo.port();
            Socket socket = kind.connectedSocket(LOOPBACK, port);
            assertThrows(SocketException.class, () -> socket.connect(new InetSocketAddress(LOOPBACK, port)));
            assertThrows(SocketException.class, () -> socket.bind(new InetSocketAddress(LOOPBACK, 0)));
            assertTrue(socket.isConnected());
            socket.close();
            assertEquals("echoed 0", echo.outcome());
        }
    }

    // ---- timeouts ----

    @ForEachKind
    void aReadTimeoutLeavesTheSocketUsableAndLosesNoData(SocketKind kind) throws IOException {
        try (FarEndProcess.Request echo = farEnd(kind).listen(ECHO);
                Socket socket = kind.connectedSocket(LOOPBACK, echo.port())) {
            socket.setSoTimeout(SHORT_TIMEOUT_MILLIS);
            InputStream in = socket.getInputStream();
            for (int attempt = 0; attempt < 2; attempt++) {
                long start = System.nanoTime();
                assertThrows(SocketTimeoutException.class, () -> in.read(new byte[8]));
                assertTrue(millisSince(start) >= SHORT_TIMEOUT_MILLIS - 50, "timed out too early");
            }
            assertEquals(SHORT_TIMEOUT_MILLIS, socket.getSoTimeout());
            assertFalse(socket.isClosed());

            byte[] sent = {1, 2, 3, 4, 5, 6, 7};
            OutputStream out = socket.getOutputStream();
            out.write(sent);
            out.flush();
            socket.setSoTimeout(10_000);
            assertArrayEquals(sent, in.readNBytes(sent.length));
            socket.shutdownOutput();
            assertEquals(-1, in.read());
            assertEquals("echoed " + sent.length, echo.outcome());
        }
    }

    @ForEachKind
    void anAcceptTimeoutLeavesTheServerSocketUsable(SocketKind kind) throws IOException {
        try (ServerSocket server = kind.boundServerSocket(0, 50, LOOPBACK)) {
            server.setSoTimeout(SHORT_TIMEOUT_MILLIS);
            long start = System.nanoTime();
            assertThrows(SocketTimeoutException.class, server::accept);
            assertTrue(millisSince(start) >= SHORT_TIMEOUT_MILLIS - 50, "timed out too early");
            assertEquals(SHORT_TIMEOUT_MILLIS, server.getSoTimeout());
            assertFalse(server.isClosed());

            server.setSoTimeout(10_000);
            try (FarEndProcess.Request greeting = farEnd(kind).connect(server.getLocalPort(), SEND_GREETING_THEN_CLOSE);
                    Socket accepted = server.accept()) {
                assertArrayEquals(FarEnd.GREETING, accepted.getInputStream().readAllBytes());
                assertEquals("sent " + FarEnd.GREETING.length, greeting.outcome());
            }
        }
    }

    // ---- close from another thread ----

    @ParameterizedTest(name = "{0}, SO_TIMEOUT {1}")
    @MethodSource("kindsWithAndWithoutTimeout")
    void closeFromAnotherThreadEndsABlockedReadWithSocketException(SocketKind kind, int soTimeout) throws Exception {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            socket.setSoTimeout(soTimeout);
            InputStream in = socket.getInputStream();
            FutureTask<Integer> read = inAnotherThread(in::read);
            assertStillBlocked(read);
            socket.close();
            assertFailsPromptlyWith(SocketException.class, read);
            assertEquals("read 0 then end of stream", drain.outcome());
        }
    }

    @ParameterizedTest(name = "{0}, SO_TIMEOUT {1}")
    @MethodSource("kindsWithAndWithoutTimeout")
    void closeFromAnotherThreadEndsABlockedAcceptWithSocketException(SocketKind kind, int soTimeout)
            throws Exception {
        try (ServerSocket server = kind.boundServerSocket(0, 50, LOOPBACK)) {
            server.setSoTimeout(soTimeout);
            FutureTask<Socket> accept = inAnotherThread(server::accept);
            assertStillBlocked(accept);
            server.close();
            assertFailsPromptlyWith(SocketException.class, accept);
            assertTrue(server.isClosed());
        }
    }

    /** Linux's shutdown(SHUT_RD) wakes the reader, which sees end of stream, as every later read does. */
    @ParameterizedTest(name = "{0}, SO_TIMEOUT {1}")
    @MethodSource("kindsWithAndWithoutTimeout")
    void shutdownInputFromAnotherThreadEndsABlockedReadWithEndOfStream(SocketKind kind, int soTimeout)
            throws Exception {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            socket.setSoTimeout(soTimeout);
            InputStream in = socket.getInputStream();
            FutureTask<Integer> read = inAnotherThread(in::read);
            assertStillBlocked(read);
            socket.shutdownInput();
            assertEquals(-1, returnsPromptly(read));
            assertEquals(-1, in.read());
            assertFalse(socket.isClosed());
            socket.close();
            assertEquals("read 0 then end of stream", drain.outcome());
        }
    }

    /**
     * SO_LINGER 0 makes close abortive (TCP's reset): the peer reads what was sent before, then
     * its read fails with a SocketException instead of ending with -1.
     */
    @ForEachKind
    void closeWithSoLingerZeroResetsTheConnection(SocketKind kind) throws Exception {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN)) {
            Socket socket = kind.connectedSocket(LOOPBACK, drain.port());
            OutputStream out = socket.getOutputStream();
            out.write(new byte[1000]);
            out.flush();
            Thread.sleep(SHORT_TIMEOUT_MILLIS);   // the far end has read them before the reset
            socket.setSoLinger(true, 0);
            socket.close();
            assertEquals("read 1000 then SocketException", drain.outcome());
        }
    }

    /** Writes 64 KiB chunks in another thread, counting them in {@code written}, until a write fails. */
    private static FutureTask<Void> writeUntilItFails(OutputStream out, AtomicLong written) {
        return inAnotherThread(() -> {
            byte[] chunk = new byte[64 * 1024];
            while (true) {
                out.write(chunk);
                written.addAndGet(chunk.length);
            }
        });
    }

    /**
     * A writer blocked because the peer reads nothing (its window and the writer's ring full)
     * gets java.net's "Socket closed" when another thread closes the socket, never an exception
     * of a layer below.
     */
    @ForEachKind
    void closeFromAnotherThreadEndsABlockedWriteWithSocketException(SocketKind kind) throws Exception {
        try (FarEndProcess.Request stall = farEnd(kind).listen(STALL);
                Socket socket = kind.connectedSocket(LOOPBACK, stall.port())) {
            OutputStream out = socket.getOutputStream();
            AtomicLong written = new AtomicLong();
            FutureTask<Void> write = writeUntilItFails(out, written);
            awaitBlockedWriter(write, written);
            socket.close();
            assertFailsPromptlyWith(SocketException.class, write);
            stall.release();
            String outcome = stall.outcome();
            assertTrue(outcome.startsWith("read "), outcome);
        }
    }

    /**
     * Another thread's close ends a stream of writes with java.net's "Socket closed", wherever
     * it lands in a write (over Aldeia, also between the write's look at the socket and its post).
     */
    @ForEachKind
    void closeFromAnotherThreadEndsAWriteInProgressWithSocketException(SocketKind kind) throws Exception {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            OutputStream out = socket.getOutputStream();
            AtomicLong written = new AtomicLong();
            FutureTask<Void> write = writeUntilItFails(out, written);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (written.get() < 4L * 1024 * 1024 && !write.isDone() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            socket.close();
            assertFailsPromptlyWith(SocketException.class, write);
            // Over Aldeia the peer is not told yet: close sends no end of stream behind a writer,
            // and destroying the queue pair says nothing on the wire (that needs the wire change
            // of the abortive close), so its read waits.
            if (!kind.connectsOverAldeia()) {
                String outcome = drain.outcome();
                assertTrue(outcome.startsWith("read "), outcome);
            }
        }
    }

    /** Returns once the writer has made no progress for a while: everything on the way is full. */
    private static void awaitBlockedWriter(FutureTask<?> write, AtomicLong written) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long before = -1;
        while (written.get() != before) {
            if (write.isDone()) {
                write.get(); // throws what ended the writer
                fail("the writer returned");
            }
            if (System.nanoTime() > deadline) {
                fail("the writer never blocked; it wrote " + written.get() + " bytes to a peer that reads nothing");
            }
            before = written.get();
            Thread.sleep(2L * SHORT_TIMEOUT_MILLIS);
        }
    }

    /**
     * java.net's sockets ignore an interrupt on a platform thread: the blocked read goes on, the
     * connection stays open, and the thread keeps its interrupt status (an NIO channel in
     * blocking mode would be closed instead).
     */
    @ForEachKind
    void anInterruptNeitherEndsABlockedReadNorClosesTheSocket(SocketKind kind) throws Exception {
        try (FarEndProcess.Request echo = farEnd(kind).listen(ECHO);
                Socket socket = kind.connectedSocket(LOOPBACK, echo.port())) {
            InputStream in = socket.getInputStream();
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            FutureTask<Integer> read = new FutureTask<>(() -> {
                int b = in.read();
                stillInterrupted.set(Thread.currentThread().isInterrupted());
                return b;
            });
            Thread reader = new Thread(read, "contract-interrupted-read");
            reader.setDaemon(true);
            reader.start();
            assertStillBlocked(read);
            reader.interrupt();
            assertStillBlocked(read);
            assertFalse(socket.isClosed());
            socket.getOutputStream().write(42);
            socket.getOutputStream().flush();
            assertEquals(42, read.get(PROMPT_SECONDS, TimeUnit.SECONDS));
            assertTrue(stillInterrupted.get(), "the reader keeps its interrupt status");
            socket.close();
            assertEquals("echoed 1", echo.outcome());
        }
    }

    private static <T> FutureTask<T> inAnotherThread(Callable<T> call) {
        FutureTask<T> task = new FutureTask<>(call);
        Thread thread = new Thread(task, "contract-blocked-call");
        thread.setDaemon(true);
        thread.start();
        return task;
    }

    private static void assertStillBlocked(FutureTask<?> task) throws InterruptedException {
        Thread.sleep(SHORT_TIMEOUT_MILLIS);
        assertFalse(task.isDone(), "the call returned though nothing could arrive");
    }

    private static <T> T returnsPromptly(FutureTask<T> task) throws Exception {
        try {
            return task.get(PROMPT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the blocked call was still blocked " + PROMPT_SECONDS + " s later", e);
        }
    }

    private static void assertFailsPromptlyWith(Class<? extends Throwable> expected, FutureTask<?> task)
            throws InterruptedException {
        try {
            Object result = task.get(PROMPT_SECONDS, TimeUnit.SECONDS);
            fail("the blocked call returned " + result + " instead of throwing " + expected.getSimpleName());
        } catch (java.util.concurrent.ExecutionException e) {
            if (!expected.isInstance(e.getCause())) {
                throw new AssertionError("expected " + expected.getSimpleName() + ", got " + e.getCause(), e.getCause());
            }
        } catch (java.util.concurrent.TimeoutException e) {
            fail("the blocked call was still blocked " + PROMPT_SECONDS + " s after the close");
        }
    }

    // ---- shutdown ----

    @ForEachKind
    void afterShutdownOutputThePeerReadsEndOfStreamAndCanStillWriteBack(SocketKind kind) throws IOException {
        try (FarEndProcess.Request reply = farEnd(kind).listen(READ_TO_EOF_THEN_REPLY);
                Socket socket = kind.connectedSocket(LOOPBACK, reply.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(new byte[1000]);
            socket.shutdownOutput();
            assertTrue(socket.isOutputShutdown());
            assertFalse(socket.isInputShutdown());
            assertFalse(socket.isClosed());
            assertThrows(SocketException.class, () -> out.write(1));
            assertThrows(SocketException.class, socket::getOutputStream);
            assertThrows(SocketException.class, socket::shutdownOutput);

            DataInputStream in = new DataInputStream(socket.getInputStream());
            assertEquals(1000, in.readLong());
            assertEquals(-1, in.read());
            assertEquals("read 1000", reply.outcome());
        }
    }

    @ForEachKind
    void afterShutdownInputReadsReturnEndOfStreamAndWritesStillArrive(SocketKind kind) throws IOException {
        try (FarEndProcess.Request reply = farEnd(kind).listen(READ_TO_EOF_THEN_REPLY);
                Socket socket = kind.connectedSocket(LOOPBACK, reply.port())) {
            InputStream in = socket.getInputStream();
            socket.shutdownInput();
            assertTrue(socket.isInputShutdown());
            assertFalse(socket.isOutputShutdown());
            assertEquals(-1, in.read());
            assertEquals(-1, in.read(new byte[4], 0, 4));
            assertEquals(0, in.available());
            assertThrows(SocketException.class, socket::getInputStream);
            assertThrows(SocketException.class, socket::shutdownInput);

            socket.getOutputStream().write(new byte[300]);
            socket.shutdownOutput();
            assertEquals("read 300", reply.outcome());
        }
    }

    @ForEachKind
    void readsReturnEndOfStreamOnceThePeerClosedAndEveryByteWasRead(SocketKind kind) throws IOException {
        try (FarEndProcess.Request greeting = farEnd(kind).listen(SEND_GREETING_THEN_CLOSE);
                Socket socket = kind.connectedSocket(LOOPBACK, greeting.port())) {
            InputStream in = socket.getInputStream();
            assertArrayEquals(FarEnd.GREETING, in.readNBytes(FarEnd.GREETING.length));
            assertEquals(-1, in.read());
            assertEquals(-1, in.read(new byte[3]));
            assertEquals(0, in.available());
            assertEquals("sent " + FarEnd.GREETING.length, greeting.outcome());
        }
    }

    /**
     * TCP sends the urgent byte out of band, and a reader without SO_OOBINLINE (the default)
     * never sees it. A connection Aldeia carries has no out-of-band channel: sendUrgentData is
     * refused with a SocketException (one of the differences the README lists), and the stream
     * goes on unharmed either way.
     */
    @ForEachKind
    void urgentDataNeverReachesTheStreamOfAReaderWithoutOobInline(SocketKind kind) throws IOException {
        try (FarEndProcess.Request reply = farEnd(kind).listen(READ_TO_EOF_THEN_REPLY);
                Socket socket = kind.connectedSocket(LOOPBACK, reply.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(1);
            if (kind.connectsOverAldeia()) {
                SocketException refused = assertThrows(SocketException.class, () -> socket.sendUrgentData(0x55));
                assertTrue(refused.getMessage().toLowerCase().contains("urgent data"), refused.getMessage());
            } else {
                socket.sendUrgentData(0x55);
            }
            out.write(2);
            socket.shutdownOutput();
            assertEquals(2, new DataInputStream(socket.getInputStream()).readLong());
            assertEquals("read 2", reply.outcome());
        }
    }

    // ---- stream arguments ----

    @ForEachKind
    void aZeroLengthReadReturnsZeroWithoutWaiting(SocketKind kind) throws IOException {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4];
            assertEquals(0, in.read(buffer, 0, 0));
            assertEquals(0, in.read(buffer, 4, 0));
            socket.setSoTimeout(SHORT_TIMEOUT_MILLIS);
            assertEquals(0, in.read(buffer, 2, 0));
        }
    }

    @ForEachKind
    void badOffsetsAndLengthsThrowIndexOutOfBounds(SocketKind kind) throws IOException {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] buffer = new byte[4];
            int[][] bad = {{-1, 1}, {0, 5}, {4, 1}, {2, -1}, {5, 0}};
            for (int[] offLen : bad) {
                assertThrows(IndexOutOfBoundsException.class, () -> in.read(buffer, offLen[0], offLen[1]),
                        () -> "read off " + offLen[0] + " len " + offLen[1]);
                assertThrows(IndexOutOfBoundsException.class, () -> out.write(buffer, offLen[0], offLen[1]),
                        () -> "write off " + offLen[0] + " len " + offLen[1]);
            }
            assertThrows(NullPointerException.class, () -> in.read(null, 0, 1));
            assertThrows(NullPointerException.class, () -> out.write(null, 0, 1));
            socket.shutdownOutput();
            assertEquals("read 0 then end of stream", drain.outcome(), "a rejected write must send nothing");
        }
    }

    // ---- close ----

    @ForEachKind
    void afterCloseStreamsAndOptionsThrowSocketException(SocketKind kind) throws IOException {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN)) {
            int port = drain.port();
            Socket socket = kind.connectedSocket(LOOPBACK, port);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            out.write(new byte[10]);
            socket.close();
            assertTrue(socket.isClosed());
            assertThrows(SocketException.class, () -> out.write(1));
            assertThrows(SocketException.class, () -> out.write(new byte[10]));
            assertThrows(SocketException.class, () -> in.read());
            assertThrows(SocketException.class, socket::getInputStream);
            assertThrows(SocketException.class, socket::getOutputStream);
            assertThrows(SocketException.class, socket::shutdownInput);
            assertThrows(SocketException.class, socket::shutdownOutput);
            assertThrows(SocketException.class, () -> socket.setSoTimeout(10));
            assertThrows(SocketException.class, socket::getTcpNoDelay);
            assertThrows(SocketException.class, () -> socket.getOption(StandardSocketOptions.SO_SNDBUF));
            assertThrows(SocketException.class, () -> socket.connect(new InetSocketAddress(LOOPBACK, port)));
            socket.close(); // idempotent
            assertEquals("read 10 then end of stream", drain.outcome());
        }
    }

    @ForEachKind
    void closingEitherStreamClosesTheSocket(SocketKind kind) throws IOException {
        for (boolean viaInput : new boolean[] {true, false}) {
            try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                    Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
                (viaInput ? socket.getInputStream() : socket.getOutputStream()).close();
                assertTrue(socket.isClosed());
                assertEquals("read 0 then end of stream", drain.outcome());
            }
        }
    }

    // ---- states and addresses ----

    @ForEachKind
    void anUnconnectedSocketReportsNothingAndRefusesStreams(SocketKind kind) throws IOException {
        try (Socket socket = kind.newSocket()) {
            assertFalse(socket.isBound());
            assertFalse(socket.isConnected());
            assertFalse(socket.isClosed());
            assertFalse(socket.isInputShutdown());
            assertFalse(socket.isOutputShutdown());
            assertNull(socket.getInetAddress());
            assertEquals(0, socket.getPort());
            assertEquals(-1, socket.getLocalPort());
            assertNull(socket.getRemoteSocketAddress());
            assertNull(socket.getLocalSocketAddress());
            assertTrue(socket.getLocalAddress().isAnyLocalAddress());
            assertThrows(SocketException.class, socket::getInputStream);
            assertThrows(SocketException.class, socket::getOutputStream);
            assertThrows(SocketException.class, socket::shutdownInput);
            assertThrows(SocketException.class, socket::shutdownOutput);
            assertNull(socket.getChannel());
            assertTrue(socket.toString().contains("unconnected"), socket.toString());
        }
    }

    @ForEachKind
    void aConnectedSocketReportsBothEndsBeforeAndAfterClose(SocketKind kind) throws IOException {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN)) {
            int port = drain.port();
            Socket socket = kind.connectedSocket(LOOPBACK, port);
            assertTrue(socket.isBound());
            assertTrue(socket.isConnected());
            assertEquals(LOOPBACK, socket.getInetAddress());
            assertEquals(port, socket.getPort());
            assertEquals(new InetSocketAddress(LOOPBACK, port), socket.getRemoteSocketAddress());
            assertEquals(LOOPBACK, socket.getLocalAddress());
            int localPort = socket.getLocalPort();
            assertTrue(localPort > 0);
            assertNotEquals(port, localPort);
            assertEquals(new InetSocketAddress(LOOPBACK, localPort), socket.getLocalSocketAddress());
            assertNull(socket.getChannel());
            String text = socket.toString();
            assertTrue(text.contains("port=" + port) && text.contains("localport=" + localPort), text);

            socket.close();
            assertTrue(socket.isClosed());
            assertTrue(socket.isBound(), "a closed socket stays bound");
            assertTrue(socket.isConnected(), "a closed socket stays connected");
            assertEquals(new InetSocketAddress(LOOPBACK, port), socket.getRemoteSocketAddress());
            assertEquals(localPort, socket.getLocalPort());
            assertTrue(socket.getLocalAddress().isAnyLocalAddress(), "a closed socket hides its local address");
            assertEquals(new InetSocketAddress(socket.getLocalAddress(), localPort), socket.getLocalSocketAddress());
            assertEquals("read 0 then end of stream", drain.outcome());
        }
    }

    @ForEachKind
    void anAcceptedSocketReportsBothEndsAndCarriesBothDirections(SocketKind kind) throws IOException {
        try (ServerSocket server = kind.boundServerSocket(0, 50, LOOPBACK)) {
            server.setSoTimeout(10_000);
            try (FarEndProcess.Request echo = farEnd(kind).connect(server.getLocalPort(), ECHO);
                    Socket accepted = server.accept()) {
                int farPort = echo.localPort();
                assertTrue(accepted.isBound() && accepted.isConnected());
                assertEquals(LOOPBACK, accepted.getInetAddress());
                assertEquals(farPort, accepted.getPort());
                assertEquals(LOOPBACK, accepted.getLocalAddress());
                assertEquals(server.getLocalPort(), accepted.getLocalPort());
                assertEquals(0, accepted.getSoTimeout(), "an accepted socket does not inherit the accept timeout");

                byte[] sent = new byte[5000];
                Arrays.fill(sent, (byte) 42);
                accepted.getOutputStream().write(sent);
                accepted.shutdownOutput();
                assertArrayEquals(sent, accepted.getInputStream().readAllBytes());
                assertEquals("echoed " + sent.length, echo.outcome());
            }
        }
    }

    @ForEachKind
    void bindToPortZeroPicksAnEphemeralPortThatConnectKeeps(SocketKind kind) throws IOException {
        try (FarEndProcess.Request echo = farEnd(kind).listen(ECHO); Socket socket = kind.newSocket()) {
            socket.bind(new InetSocketAddress(LOOPBACK, 0));
            assertTrue(socket.isBound());
            assertFalse(socket.isConnected());
            int localPort = socket.getLocalPort();
            assertTrue(localPort > 0);
            assertEquals(new InetSocketAddress(LOOPBACK, localPort), socket.getLocalSocketAddress());
            assertThrows(SocketException.class, () -> socket.bind(new InetSocketAddress(LOOPBACK, 0)));

            socket.connect(new InetSocketAddress(LOOPBACK, echo.port()));
            assertEquals(localPort, socket.getLocalPort());
            socket.shutdownOutput();
            assertEquals(-1, socket.getInputStream().read());
        }
    }

    // ---- server sockets ----

    @ForEachKind
    void aServerSocketBindsOnceRefusesAPortInUseAndRebindsAfterClose(SocketKind kind) throws IOException {
        ServerSocket server = kind.newServerSocket();
        assertFalse(server.isBound());
        assertEquals(-1, server.getLocalPort());
        assertNull(server.getInetAddress());
        assertNull(server.getLocalSocketAddress());
        assertThrows(SocketException.class, server::accept);
        assertTrue(server.getReuseAddress(), "server sockets reuse addresses by default");
        assertTrue(server.toString().contains("unbound"), server.toString());

        server.bind(new InetSocketAddress(LOOPBACK, 0), 1);
        int port = server.getLocalPort();
        assertTrue(server.isBound());
        assertTrue(port > 0);
        assertEquals(LOOPBACK, server.getInetAddress());
        assertEquals(new InetSocketAddress(LOOPBACK, port), server.getLocalSocketAddress());
        assertTrue(server.toString().contains("localport=" + port), server.toString());
        assertNull(server.getChannel());
        assertThrows(SocketException.class, () -> server.bind(new InetSocketAddress(LOOPBACK, 0)));
        assertThrows(BindException.class, () -> kind.boundServerSocket(port, 50, LOOPBACK));

        // A connection accepted and closed here leaves the port in TIME_WAIT: reuse must cover it.
        server.setSoTimeout(10_000);
        try (FarEndProcess.Request greeting = farEnd(kind).connect(port, SEND_GREETING_THEN_CLOSE);
                Socket accepted = server.accept()) {
            assertArrayEquals(FarEnd.GREETING, accepted.getInputStream().readAllBytes());
            assertEquals("sent " + FarEnd.GREETING.length, greeting.outcome());
        }
        server.close();
        assertTrue(server.isClosed());
        assertTrue(server.isBound(), "a closed server socket stays bound");
        assertThrows(SocketException.class, server::accept);
        server.close(); // idempotent
        try (ServerSocket again = kind.boundServerSocket(port, 50, LOOPBACK)) {
            assertEquals(port, again.getLocalPort());
        }
    }

    /** java.net keeps what a server socket was bound to after close; an unbound one reports nothing. */
    @ForEachKind
    void aClosedServerSocketStillReportsTheAddressItWasBoundTo(SocketKind kind) throws IOException {
        ServerSocket server = kind.boundServerSocket(0, 50, LOOPBACK);
        int port = server.getLocalPort();
        server.close();
        assertTrue(server.isClosed());
        assertEquals(LOOPBACK, server.getInetAddress());
        assertEquals(port, server.getLocalPort());
        assertEquals(new InetSocketAddress(LOOPBACK, port), server.getLocalSocketAddress());
        assertTrue(server.toString().contains("localport=" + port), server.toString());

        ServerSocket neverBound = kind.newServerSocket();
        neverBound.close();
        assertNull(neverBound.getInetAddress());
        assertEquals(-1, neverBound.getLocalPort());
        assertNull(neverBound.getLocalSocketAddress());
    }

    // ---- options ----

    @ForEachKind
    void socketOptionsHaveTheDefaultsOfJavaNetAndReportWhatWasSet(SocketKind kind) throws IOException {
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            assertFalse(socket.getTcpNoDelay());
            socket.setTcpNoDelay(true);
            assertTrue(socket.getTcpNoDelay());
            socket.setOption(StandardSocketOptions.TCP_NODELAY, false);
            assertFalse(socket.getOption(StandardSocketOptions.TCP_NODELAY));

            assertFalse(socket.getKeepAlive());
            socket.setKeepAlive(true);
            assertTrue(socket.getKeepAlive());

            assertFalse(socket.getReuseAddress());
            socket.setReuseAddress(true);
            assertTrue(socket.getReuseAddress());

            assertEquals(-1, socket.getSoLinger());
            socket.setSoLinger(true, 7);
            assertEquals(7, socket.getSoLinger());
            assertEquals(7, socket.getOption(StandardSocketOptions.SO_LINGER));
            socket.setSoLinger(true, 100_000);
            assertEquals(65535, socket.getSoLinger(), "linger is capped like java.net's");
            socket.setSoLinger(false, 3);
            assertEquals(-1, socket.getSoLinger());
            assertThrows(IllegalArgumentException.class, () -> socket.setSoLinger(true, -1));

            assertEquals(0, socket.getSoTimeout());
            assertThrows(IllegalArgumentException.class, () -> socket.setSoTimeout(-1));
        }
    }

    /**
     * Buffer sizes are hints (Socket's Javadoc), and SO_RCVBUF matters before connect: a modest
     * request made then is in use once connected. A set after connect is accepted; whether it
     * resizes the connection is the implementation's (Aldeia's keeps its registered memory).
     */
    @ForEachKind
    void bufferSizesArePositiveHintsAndAModestRequestBeforeConnectIsReported(SocketKind kind) throws IOException {
        int modest = 32 * 1024;
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.newSocket()) {
            assertTrue(socket.getSendBufferSize() > 0);
            assertTrue(socket.getReceiveBufferSize() > 0);
            socket.setSendBufferSize(modest);
            socket.setReceiveBufferSize(modest);
            socket.connect(new InetSocketAddress(LOOPBACK, drain.port()));
            assertTrue(socket.getSendBufferSize() >= modest, "SO_SNDBUF " + socket.getSendBufferSize());
            assertTrue(socket.getReceiveBufferSize() >= modest, "SO_RCVBUF " + socket.getReceiveBufferSize());
            assertEquals(socket.getSendBufferSize(), socket.getOption(StandardSocketOptions.SO_SNDBUF));
            socket.setSendBufferSize(2 * modest);
            socket.setReceiveBufferSize(2 * modest);
            assertTrue(socket.getSendBufferSize() > 0 && socket.getReceiveBufferSize() > 0);
            assertThrows(IllegalArgumentException.class, () -> socket.setSendBufferSize(0));
            assertThrows(IllegalArgumentException.class, () -> socket.setReceiveBufferSize(-1));
            assertThrows(IllegalArgumentException.class, () -> socket.setOption(StandardSocketOptions.SO_SNDBUF, -5));
        }
    }

    @ForEachKind
    void supportedOptionsAreHonestAndOthersAreRefused(SocketKind kind) throws IOException {
        SocketOption<Integer> foreign = new SocketOption<>() {
            @Override
            public String name() {
                return "NOT_A_SOCKET_OPTION";
            }

            @Override
            public Class<Integer> type() {
                return Integer.class;
            }
        };
        Set<SocketOption<?>> required = Set.of(StandardSocketOptions.TCP_NODELAY, StandardSocketOptions.SO_SNDBUF,
                StandardSocketOptions.SO_RCVBUF, StandardSocketOptions.SO_KEEPALIVE, StandardSocketOptions.SO_LINGER,
                StandardSocketOptions.SO_REUSEADDR);
        try (FarEndProcess.Request drain = farEnd(kind).listen(DRAIN);
                Socket socket = kind.connectedSocket(LOOPBACK, drain.port())) {
            Set<SocketOption<?>> supported = socket.supportedOptions();
            assertTrue(supported.containsAll(required), "supported: " + supported);
            for (SocketOption<?> option : supported) {
                socket.getOption(option); // every option it claims can be read
            }
            assertThrows(UnsupportedOperationException.class, () -> socket.setOption(foreign, 1));
            assertThrows(UnsupportedOperationException.class, () -> socket.getOption(foreign));
            assertThrows(IllegalArgumentException.class, () -> socket.setOption(StandardSocketOptions.TCP_NODELAY, null));
        }
        try (ServerSocket server = kind.boundServerSocket(0, 50, LOOPBACK)) {
            Set<SocketOption<?>> supported = server.supportedOptions();
            assertTrue(supported.containsAll(Set.of(StandardSocketOptions.SO_RCVBUF,
                    StandardSocketOptions.SO_REUSEADDR)), "supported: " + supported);
            for (SocketOption<?> option : supported) {
                server.getOption(option);
            }
            server.setOption(StandardSocketOptions.SO_REUSEADDR, false);
            assertFalse(server.getReuseAddress());
            assertThrows(UnsupportedOperationException.class, () -> server.setOption(foreign, 1));
        }
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
