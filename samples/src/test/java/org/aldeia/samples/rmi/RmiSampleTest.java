package org.aldeia.samples.rmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RMI sample end to end: the server (registry + remote object exported with the Aldeia
 * factories) in one JVM, the client in another, no configuration file, so Aldeia runs MicroVAPI
 * over DECK. The proof that the calls went through DECK and not through JDK sockets: the server
 * logged that transport, every connection its RMI runtime accepted was an AldeiaSocket, and
 * those connections carried more than the arrays of every call (plain JDK sockets would make
 * the Aldeia count 0, see {@link ConnectionMeterTest}). The timeout runs the test in its own
 * thread, so a child that never answers fails the test instead of hanging the build.
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class RmiSampleTest {

    private static final int INTS = 4096;
    private static final int CALLS = 3;
    private static final Pattern SERVED = Pattern.compile(
            "rmi server served (\\d+) calls: accepted (\\d+) connections \\((\\d+) AldeiaSocket\\), read (\\d+) bytes,"
                    + " wrote (\\d+) bytes");

    private final List<Process> children = new ArrayList<>();

    @AfterEach
    void endChildren() throws InterruptedException {
        for (Process child : children) {
            child.destroyForcibly().waitFor();
        }
    }

    @Test
    void aClientInAnotherJvmCallsTheServerThroughDeck(@TempDir Path logs) throws Exception {
        callsGoThrough(logs, List.of(), "MicroVAPI over DECK");
    }

    /** The same over the fabric route, VAPI over libfabric's tcp provider on loopback (issue 13). */
    @Test
    void aClientInAnotherJvmCallsTheServerOverTheFabricRoute(@TempDir Path logs) throws Exception {
        assumeTrue(RmiSampleTest.class.getResource("/linux-x86-64/libaldeiafabric.so") != null,
                "libaldeiafabric.so was not built: libfabric's headers were missing (apt-get install libfabric-dev)");
        Path conf = Files.writeString(logs.resolve("aldeia.conf"),
                "socket_type = SOCKET_VAPI\nfabric_provider = tcp\nfabric_domain = lo\n");
        callsGoThrough(logs, List.of("-Daldeia.configuration=" + conf), "VAPI over libfabric tcp");
    }

    /** Server and client JVMs with {@code options}; every call and connection must go over {@code transport}. */
    private void callsGoThrough(Path logs, List<String> options, String transport) throws Exception {
        int port = freePort();
        Path serverLog = logs.resolve("server.log");
        Path clientLog = logs.resolve("client.log");
        Process server = start(serverLog, options, "server", "--port", String.valueOf(port), "--calls",
                String.valueOf(CALLS), "--hostname", "127.0.0.1");
        BufferedReader serverOut = stdout(server);
        assertEquals("rmi server " + RmiDemo.READY + " " + port, serverOut.readLine(), log("server", serverLog));

        Process client = start(clientLog, options, "client", "--host", "127.0.0.1", "--port",
                String.valueOf(port), "--ints", String.valueOf(INTS), "--calls", String.valueOf(CALLS));
        List<String> clientLines = stdout(client).lines().toList();
        assertEquals(0, exitStatus(client), log("client", clientLog));
        assertEquals(1, clientLines.size(), clientLines.toString());
        assertTrue(clientLines.get(0).startsWith("rmi client: " + CALLS + " calls reversed " + INTS + " ints each in "),
                clientLines.get(0));
        assertTrue(clientLines.get(0).contains(" over " + transport + " "), clientLines.get(0));

        String served = serverOut.readLine();
        assertEquals(0, exitStatus(server), log("server", serverLog));
        assertNotNull(served, "the server printed no summary");
        Matcher counts = SERVED.matcher(served);
        assertTrue(counts.matches(), served);
        assertEquals(CALLS, Integer.parseInt(counts.group(1)));
        int connections = Integer.parseInt(counts.group(2));
        assertTrue(connections >= 1, served);
        assertEquals(connections, Integer.parseInt(counts.group(3)), "every accepted connection is Aldeia's: " + served);
        long payload = (long) CALLS * INTS * Integer.BYTES;
        assertTrue(Long.parseLong(counts.group(4)) > payload, "the arrays came in over Aldeia: " + served);
        assertTrue(Long.parseLong(counts.group(5)) > payload, "the reversed arrays went out over Aldeia: " + served);

        assertTrue(Files.readString(serverLog).contains("Aldeia: using " + transport), log("server", serverLog));
    }

    /**
     * Runs {@link RmiDemo} with {@code args} in a JVM with this one's class path and the JVM
     * {@code options}; its log goes to {@code log}.
     */
    private Process start(Path log, List<String> options, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path")));
        command.addAll(options);
        command.add(RmiDemo.class.getName());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        children.add(process);
        process.getOutputStream().close();
        return process;
    }

    /** A failure message with the child's log, read only if an assertion fails. */
    private static Supplier<String> log(String child, Path log) {
        return () -> {
            try {
                return "the " + child + "'s log:\n" + Files.readString(log);
            } catch (IOException e) {
                return "the " + child + "'s log could not be read: " + e;
            }
        };
    }

    private static BufferedReader stdout(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    private static int exitStatus(Process process) throws InterruptedException {
        assertTrue(process.waitFor(20, TimeUnit.SECONDS), "the child JVM did not end");
        return process.exitValue();
    }

    private static int freePort() throws IOException {
        try (ServerSocketChannel probe = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }
}
