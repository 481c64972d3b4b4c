package org.aldeia.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

import fi.iki.elonen.NanoHTTPD;
import fi.iki.elonen.SimpleWebServer;

/**
 * Zero code change, proven with a program the project did not write: NanoHTTPD's own
 * {@code SimpleWebServer} main, unmodified from Maven Central, serves a file under the agent,
 * and {@code HttpURLConnection}-based {@link HttpFetch} fetches it under the agent too; the
 * bytes arrive intact and both sides log that the connection went through Aldeia. A client
 * without the agent then fetches from the same server over plain TCP. The timeout runs the
 * test in its own thread, so a child that never answers fails the test instead of hanging CI.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class NanoHttpdUnderAgentIT extends ChildJvmTest {

    private static final int FILE_BYTES = 1 << 20;
    private static final String SERVER = "nanohttpd";

    @Test
    void anUnmodifiedWebServerServesAnAldeiaClientOverAldeiaAndAPlainClientOverTcp() throws Exception {
        Path site = Files.createDirectory(work.resolve("site"));
        byte[] content = new byte[FILE_BYTES];
        new Random(FILE_BYTES).nextBytes(content);
        Files.write(site.resolve("payload.bin"), content);
        String expected = "status 200 bytes " + FILE_BYTES + " sha256 "
                + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        Path conf = Files.writeString(work.resolve("aldeia.conf"), ChildJvms.ALDEIA_ON_LOOPBACK);
        int port = ChildJvms.freePort();
        String url = "http://127.0.0.1:" + port + "/payload.bin";

        Process server = jvms.start(SERVER, List.of(ChildJvms.agent(conf), ChildJvms.debugLogging(),
                "-cp", ChildJvms.classPath(SimpleWebServer.class, NanoHTTPD.class), SimpleWebServer.class.getName(),
                "-h", "127.0.0.1", "-p", String.valueOf(port), "-d", site.toString(), "-q"));
        BufferedReader serverOut = ChildJvms.stdout(server);
        awaitStarted(serverOut);

        assertEquals(expected, fetch("aldeia-client", url, ChildJvms.agent(conf), ChildJvms.debugLogging()));
        assertTrue(Pattern.compile("Aldeia connect to 127\\.0\\.0\\.1:" + port + ": Aldeia \\(")
                .matcher(jvms.readLog("aldeia-client")).find(), jvms.log("aldeia-client"));

        assertEquals(expected, fetch("plain-client", url));

        server.getOutputStream().close();   // SimpleWebServer stops when its stdin ends
        jvms.assertExitsCleanly(SERVER, server, 20);
        String serverLog = jvms.readLog(SERVER);
        assertTrue(serverLog.contains("Aldeia installed"), jvms.log(SERVER));
        assertTrue(accepted(port, "Aldeia client").matcher(serverLog).find(), jvms.log(SERVER));
        assertTrue(accepted(port, "plain TCP client").matcher(serverLog).find(), jvms.log(SERVER));
        assertTrue(serverLog.contains("Aldeia: using MicroVAPI over DECK"), jvms.log(SERVER));
    }

    /** Runs {@link HttpFetch} on the URL with the given JVM options and returns its one line. */
    private String fetch(String name, String url, String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of(options));
        command.addAll(List.of("-cp", ChildJvms.classPath(HttpFetch.class), HttpFetch.class.getName(), url));
        Process client = jvms.start(name, command);
        client.getOutputStream().close();
        List<String> lines = ChildJvms.stdout(client).lines().toList();
        jvms.assertExitsCleanly(name, client, 30);
        assertEquals(1, lines.size(), () -> lines + "; " + jvms.log(name).get());
        return lines.get(0);
    }

    private void awaitStarted(BufferedReader serverOut) throws Exception {
        for (String line; (line = serverOut.readLine()) != null; ) {
            if (line.startsWith("Server started")) {
                return;
            }
        }
        fail("the web server ended before it said it had started; " + jvms.log(SERVER).get());
    }

    private static Pattern accepted(int port, String kind) {
        return Pattern.compile("Aldeia accept on port " + port + " from 127\\.0\\.0\\.1:\\d+: " + kind);
    }
}
