package org.aldeia.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * The agent jar on its own ({@code java -javaagent:... -version}, no application): it installs
 * with no configuration, and when it cannot install it stops the JVM with status 1 and one
 * line on stderr naming what is wrong, before the application (here, -version) runs.
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class AgentFailureIT extends ChildJvmTest {

    private static final String JVM = "java-version";

    @Test
    void withNoConfigurationTheAgentInstallsAndTheJvmRuns() throws Exception {
        assertEquals(0, run("-javaagent:" + ChildJvms.agentJar()), jvms.log(JVM));
        String log = jvms.readLog(JVM);
        assertTrue(log.contains("Aldeia installed"), jvms.log(JVM));
        assertTrue(log.contains("version \"" + Runtime.version().feature()), jvms.log(JVM));
    }

    @Test
    void aBadRuleLineStopsTheJvmNamingTheFileAndTheLine() throws Exception {
        Path conf = Files.writeString(work.resolve("bad.conf"), "# a rule with no ports\nconnect 127.0.0.1 *\nconnect 127.0.0.1\n");
        assertEquals(1, run(ChildJvms.agent(conf)), jvms.log(JVM));
        String log = jvms.readLog(JVM);
        assertTrue(log.contains("Aldeia agent: Aldeia was not installed: "), jvms.log(JVM));
        assertTrue(log.contains(conf + ":3"), jvms.log(JVM));
        assertFalse(log.contains("version \""), "the JVM went on after the agent failed; " + jvms.log(JVM).get());
    }

    @Test
    void theAgentArgumentAndADifferentPropertyAreRefusedNamingBoth() throws Exception {
        Path fromArgument = Files.writeString(work.resolve("argument.conf"), "");
        Path fromProperty = Files.writeString(work.resolve("property.conf"), "");
        assertEquals(1, run(ChildJvms.agent(fromArgument), "-Daldeia.configuration=" + fromProperty), jvms.log(JVM));
        String log = jvms.readLog(JVM);
        assertTrue(log.contains(fromArgument.toString()) && log.contains(fromProperty.toString()), jvms.log(JVM));
    }

    /** {@code java <options> -version}: its exit status; its stderr is in the JVM's log. */
    private int run(String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of(options));
        command.add("-version");
        Process jvm = jvms.start(JVM, command);
        jvm.getOutputStream().close();
        return jvms.exitStatus(JVM, jvm, 30);
    }
}
