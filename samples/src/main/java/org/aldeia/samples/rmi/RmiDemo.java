package org.aldeia.samples.rmi;

import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Command line of the RMI sample: {@code server} (registry + remote object exported with the
 * Aldeia RMI factories) or {@code client} (in another JVM, perhaps on another node). Start the
 * server first; both sides make the same number of calls, then the server prints what its
 * connections carried and both end.
 */
public final class RmiDemo {

    private static final Logger log = LoggerFactory.getLogger(RmiDemo.class);

    /** What the server prints once clients may connect (the same words as the other samples' servers). */
    static final String READY = "listening on port";

    static final String USAGE = """
            usage: RmiDemo server --port P [--calls 3] [--hostname H]
                   RmiDemo client --host H --port P [--ints 4096] [--calls 3]
              --hostname  the address the server's stubs tell clients to connect to
                          (sets java.rmi.server.hostname; default: this host's address)""";

    private static final Set<String> SERVER_OPTIONS = Set.of("port", "calls", "hostname");
    private static final Set<String> CLIENT_OPTIONS = Set.of("host", "port", "ints", "calls");

    private RmiDemo() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }

    /** Runs one side; returns the exit status: 0, 1 when the run failed, 2 for a bad command line. */
    static int run(String[] args, PrintStream out) {
        try {
            String role = args.length == 0 ? "" : args[0];
            switch (role) {
                case "server" -> {
                    Map<String, String> options = options(args, SERVER_OPTIONS);
                    if (options.containsKey("hostname")) {
                        System.setProperty("java.rmi.server.hostname", options.get("hostname"));
                    }
                    new RmiServer(integer(options, "port", null), integer(options, "calls", 3), out).run();
                }
                case "client" -> {
                    Map<String, String> options = options(args, CLIENT_OPTIONS);
                    String host = options.getOrDefault("host", "localhost");
                    new RmiClient(host, integer(options, "port", null), integer(options, "ints", 4096),
                            integer(options, "calls", 3), out).run();
                }
                default -> throw new IllegalArgumentException("the first argument must be 'server' or 'client'");
            }
            return 0;
        } catch (IllegalArgumentException e) {
            System.err.println("rmi: " + e.getMessage());
            System.err.println(USAGE);
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.error("rmi {} was interrupted", args[0]);
            return 1;
        } catch (Exception e) {
            log.error("rmi {} failed: {}", args[0], e.toString());
            log.debug("rmi failure detail", e);
            return 1;
        }
    }

    /** {@code --name value} pairs after the role word; unknown names are errors, so a typo never runs defaults. */
    private static Map<String, String> options(String[] args, Set<String> allowed) {
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!allowed.contains(name)) {
                throw new IllegalArgumentException("unknown option '" + args[i] + "' for " + args[0]);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + args[i] + " needs a value");
            }
            options.put(name, args[i + 1]);
        }
        return options;
    }

    /** A positive integer option; {@code fallback} when absent, or an error if the option is required (null). */
    private static int integer(Map<String, String> options, String name, Integer fallback) {
        String text = options.get(name);
        if (text == null) {
            if (fallback == null) {
                throw new IllegalArgumentException("--" + name + " is required");
            }
            return fallback;
        }
        try {
            int value = Integer.parseInt(text.trim());
            if (value < 1) {
                throw new IllegalArgumentException("--" + name + " must be at least 1, not " + value);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, not '" + text + "'");
        }
    }
}
