package org.aldeia.bench;

import java.util.List;
import java.util.Locale;

/**
 * Where the two processes of a row run. On a small virtual machine this decides how long a
 * cross-core wake-up takes, so every row is measured both ways.
 */
enum Placement {
    /** The scheduler places both processes (and may move them). */
    FREE("free", new int[0]),
    /** Server on core 0, client on core 1 (taskset): every wake-up crosses cores. */
    PINNED("pinned", new int[] {0, 1}),
    /**
     * Server in emulated host A on core 0, client in host B on core 1 ({@link EmulatedHosts}):
     * TCP over a veth pair between two network namespaces, as between two machines of one rack
     * minus the wire; only rows that can cross hosts run here ({@link Transport#crossesHosts()}).
     */
    HOSTS("hosts", new int[] {0, 1});

    private final String label;
    private final int[] cpus;

    Placement(String label, int[] cpus) {
        this.label = label;
        this.cpus = cpus;
    }

    String label() {
        return label;
    }

    /** The CPU of node 0 (server) and 1 (client), or none. */
    int[] cpus() {
        return cpus.clone();
    }

    /** The prefix that runs a command as node {@code node} (0 server, 1 client) of this placement. */
    List<String> taskset(int node) {
        return cpus.length == 0 ? List.of() : List.of("taskset", "-c", Integer.toString(cpus[node]));
    }

    /** {@code free}, {@code pinned}, {@code both} (free and pinned), {@code hosts} or {@code all}, as --placement takes them. */
    static List<Placement> parse(String option) {
        switch (option.toLowerCase(Locale.ROOT)) {
            case "free":
                return List.of(FREE);
            case "pinned":
                return List.of(PINNED);
            case "both":
                return List.of(FREE, PINNED);
            case "hosts":
                return List.of(HOSTS);
            case "all":
                return List.of(FREE, PINNED, HOSTS);
            default:
                throw new IllegalArgumentException("--placement must be free, pinned, both, hosts or all, not '" + option + "'");
        }
    }
}
