package org.aldeia.samples;

import java.io.PrintStream;
import java.net.ServerSocket;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What every sample's main shares: failures as one clear line and an exit status, the server's ready line. */
final class MainRunner {

    private static final Logger log = LoggerFactory.getLogger(MainRunner.class);

    /** Exit status of a run that failed (I/O, peer, verification). */
    static final int FAILED = 1;
    /** Exit status of a command line that could not be understood. */
    static final int USAGE = 2;

    /** What a server prints on stdout once it accepts connections (the demo waits for it). */
    static final String READY = "listening on port";

    interface Body {
        void run() throws Exception;
    }

    private MainRunner() {
    }

    /** Tells whoever started this server JVM that it now accepts connections. */
    static void announceListening(PrintStream out, String program, SocketKind kind, ServerSocket server, int port) {
        int shown = port != 0 ? port : server.getLocalPort();
        out.println(program + " (" + kind.optionValue() + ") " + READY + " " + shown);
        out.flush();
    }

    /** Runs {@code body}; returns 0, {@link #FAILED} or {@link #USAGE}. */
    static int run(String program, String usage, Body body) {
        try {
            body.run();
            return 0;
        } catch (IllegalArgumentException e) {
            System.err.println(program + ": " + e.getMessage());
            System.err.println(usage);
            return USAGE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.error("{} was interrupted", program);
            return FAILED;
        } catch (Exception e) {
            log.error("{} failed: {}", program, e.toString());
            log.debug("{} failure detail", program, e);
            return FAILED;
        }
    }
}
