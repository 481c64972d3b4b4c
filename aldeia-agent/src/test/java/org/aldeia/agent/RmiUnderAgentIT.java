package org.aldeia.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * RMI with no socket factory at all ({@link RmiPlainServer}, {@link RmiPlainClient}: no Aldeia
 * import) runs over Aldeia once both JVMs start under the agent with a {@code connect} rule for
 * the loopback address: the registry lookup and the calls connect through Aldeia, and the
 * registry's and the exported object's server sockets accept them as Aldeia clients.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class RmiUnderAgentIT extends ChildJvmTest {

    private static final int CALLS = 3;
    private static final int INTS = 4096;

    @Test
    void plainRmiCallsGoThroughAldeiaUnderTheAgent() throws Exception {
        Path conf = Files.writeString(work.resolve("aldeia.conf"), ChildJvms.ALDEIA_ON_LOOPBACK);
        int port = ChildJvms.freePort();
        List<String> underAgent = List.of(ChildJvms.agent(conf), ChildJvms.debugLogging(),
                "-Djava.rmi.server.hostname=127.0.0.1", "-cp", ChildJvms.classPath(RmiPlainServer.class));

        Process server = jvms.start("rmi-server", concat(underAgent, RmiPlainServer.class.getName(),
                String.valueOf(port), String.valueOf(CALLS)));
        BufferedReader serverOut = ChildJvms.stdout(server);
        assertEquals("READY " + port, serverOut.readLine(), jvms.log("rmi-server"));

        Process client = jvms.start("rmi-client", concat(underAgent, RmiPlainClient.class.getName(),
                "127.0.0.1", String.valueOf(port), String.valueOf(CALLS), String.valueOf(INTS)));
        client.getOutputStream().close();
        List<String> clientOut = ChildJvms.stdout(client).lines().toList();
        jvms.assertExitsCleanly("rmi-client", client, 30);
        assertEquals(List.of("REVERSED " + CALLS + " x " + INTS), clientOut, jvms.log("rmi-client"));

        assertEquals("SERVED " + CALLS, serverOut.readLine(), jvms.log("rmi-server"));
        jvms.assertExitsCleanly("rmi-server", server, 20);

        String clientLog = jvms.readLog("rmi-client");
        assertTrue(Pattern.compile("Aldeia connect to 127\\.0\\.0\\.1:" + port + ": Aldeia \\(").matcher(clientLog).find(),
                jvms.log("rmi-client"));
        assertFalse(clientLog.contains(": plain TCP (no connect rule matches)"), jvms.log("rmi-client"));
        String serverLog = jvms.readLog("rmi-server");
        assertTrue(Pattern.compile("Aldeia accept on port " + port + " from 127\\.0\\.0\\.1:\\d+: Aldeia client")
                .matcher(serverLog).find(), jvms.log("rmi-server"));
        // The calls themselves go to the object's anonymous port, not the registry's.
        assertTrue(Pattern.compile("Aldeia accept on port (?!" + port + "\\b)\\d+ from 127\\.0\\.0\\.1:\\d+: Aldeia client")
                .matcher(serverLog).find(), jvms.log("rmi-server"));
        assertFalse(serverLog.contains(": plain TCP client"), jvms.log("rmi-server"));
    }

    private static List<String> concat(List<String> options, String... mainAndArguments) {
        return Stream.concat(options.stream(), Arrays.stream(mainAndArguments)).toList();
    }
}
