package org.aldeia.agent;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.nio.file.Path;

import org.aldeia.core.Aldeia;
import org.aldeia.core.config.AldeiaConfiguration;

/**
 * The Java agent that puts an unchanged application on Aldeia:
 * {@code java -javaagent:aldeia-agent.jar[=/path/to/aldeia.conf] -jar app.jar}. It names the
 * configuration file (the agent argument, if any) in {@code -Daldeia.configuration} and calls
 * {@link Aldeia#install()}, which makes Aldeia the JVM's socket implementation; aldeia.conf's
 * {@code bind}/{@code connect} rules then decide which sockets of the application go through
 * Aldeia. It transforms no class: the socket factories of java.net are all it needs.
 */
public final class AldeiaAgent {

    private AldeiaAgent() {}

    /**
     * Runs before the application's main ({@code -javaagent:}). When Aldeia cannot be installed
     * the JVM stops with status 1 and one line on stderr saying why: an application that was
     * meant to run over Aldeia must not silently run over plain TCP instead.
     */
    public static void premain(String agentArgument, Instrumentation instrumentation) {
        try {
            install(agentArgument);
        } catch (IOException | RuntimeException e) {
            System.err.println(failure(e));
            // Not a thrown exception: the JVM answers that with an abort (a core dump where they
            // are enabled, and no at-exit clean-up) and a stack trace that buries the sentence.
            System.exit(1);
        }
    }

    /**
     * Runs when the agent is attached to a running JVM. A failure is reported to the attaching
     * tool and leaves the running application as it was, on its previous sockets.
     */
    public static void agentmain(String agentArgument, Instrumentation instrumentation) {
        try {
            install(agentArgument);
        } catch (IOException | RuntimeException e) {
            String message = failure(e);
            System.err.println(message);
            throw new IllegalStateException(message, e);
        }
    }

    private static void install(String agentArgument) throws IOException {
        useConfiguration(agentArgument);
        Aldeia.install();
    }

    /**
     * Names the configuration file of the agent argument in {@link #AldeiaConfiguration.PROPERTY}; an
     * empty or absent argument leaves the property as it is (set by -D, or unset: no file).
     *
     * @throws IllegalArgumentException if -D already names a different file: which one was meant is
     *         not for the agent to guess
     */
    static void useConfiguration(String agentArgument) {
        if (agentArgument == null || agentArgument.isBlank()) {
            return;
        }
        String file = agentArgument.trim();
        String already = System.getProperty(AldeiaConfiguration.PROPERTY);
        if (already != null && !sameFile(already, file)) {
            throw new IllegalArgumentException("the agent argument names configuration file '" + file
                    + "' but -D" + AldeiaConfiguration.PROPERTY + " names '" + already + "'; give the file only once");
        }
        System.setProperty(AldeiaConfiguration.PROPERTY, file);
    }

    private static boolean sameFile(String a, String b) {
        return Path.of(a).toAbsolutePath().normalize().equals(Path.of(b).toAbsolutePath().normalize());
    }

    /** The one line a user sees; the exception's message already names the file and line. */
    private static String failure(Exception e) {
        String reason = e.getMessage() == null ? e.toString() : e.getMessage();
        return "Aldeia agent: Aldeia was not installed: " + reason;
    }
}
