package org.aldeia.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.aldeia.core.Aldeia;

/** The rows of the benchmark table, in the order they run; JDK loopback is the baseline. */
enum Transport {
    JDK_LOOPBACK("JDK Socket, loopback TCP", null, List.of()),
    JDK_UNIX("JDK Unix-domain SocketChannel", null, List.of()),
    /** No configuration at all: DECK auto reaches the other JVM (this host) through sci. */
    ALDEIA_DYNAMIC_AUTO("Aldeia, DECK dynamic/auto", null, List.of()),
    ALDEIA_DYNAMIC_TCP("Aldeia, DECK dynamic/tcp", null, List.of(), Map.of("deck_transport", "tcp")),
    /**
     * The zero-code way: java.net's own Socket and ServerSocket after Aldeia.install() (what the
     * agent does), a connect rule for loopback, DECK auto (sci here).
     */
    ALDEIA_INSTALLED("JDK Socket, Aldeia installed (auto: sci)", null, List.of(), Map.of(),
            List.of("connect 127.0.0.1 *")),
    /** What installing Aldeia costs the connections it leaves plain: no connect rule, so plain TCP. */
    INSTALLED_PLAIN("JDK Socket, Aldeia installed, no rule (TCP)", null, List.of()),
    ALDEIA_STATIC_TCP("Aldeia, DECK static/tcp", "tcp", List.of()),
    /** What deck_tcp_encryption costs: every DECK tcp connection runs TLS 1.3 (issue 9). */
    ALDEIA_STATIC_TCP_TLS("Aldeia, DECK static/tcp, TLS 1.3", "tcp", List.of(), Map.of("deck_tcp_encryption", "on")),
    ALDEIA_STATIC_SCI("Aldeia, DECK static/sci", "sci", List.of()),
    /**
     * The thesis's mtu of 1024 (the default was 64 KiB blocks from issue 11 on): a 1 MiB write
     * is 1024 blocks, descriptors and completions instead of 16, which shows what the block
     * size costs.
     */
    ALDEIA_STATIC_SCI_MTU1K("Aldeia, DECK static/sci, mtu 1 KiB (thesis)", "sci", List.of(), Map.of("mtu", "1024")),
    ALDEIA_STATIC_TCP_MTU1K("Aldeia, DECK static/tcp, mtu 1 KiB (thesis)", "tcp", List.of(), Map.of("mtu", "1024")),
    /**
     * The fabric route, VAPI over libfabric (issue 13), on the providers this machine has: shm,
     * and tcp over loopback (through ofi_rxm). Beside the libfabric-shm and libfabric-tcp
     * anchors, fi_pingpong on the same providers.
     */
    ALDEIA_FABRIC_SHM("Aldeia, VAPI over libfabric shm", null, List.of(),
            settings("socket_type", "SOCKET_VAPI", "fabric_provider", "shm")),
    ALDEIA_FABRIC_TCP("Aldeia, VAPI over libfabric tcp (loopback)", null, List.of(),
            settings("socket_type", "SOCKET_VAPI", "fabric_provider", "tcp", "fabric_domain", "lo")),
    /** Agrona reaches into sun.nio.ch to map and unmap the log buffers. */
    AERON_IPC("Aeron IPC (backoff idle)", null, List.of("--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"));

    static final Transport BASELINE = JDK_LOOPBACK;

    private final String label;
    private final String staticDeckTransport;
    private final List<String> jvmOptions;
    private final Map<String, String> aldeiaSettings;
    private final List<String> aldeiaRules;

    Transport(String label, String staticDeckTransport, List<String> jvmOptions) {
        this(label, staticDeckTransport, jvmOptions, Map.of());
    }

    Transport(String label, String staticDeckTransport, List<String> jvmOptions, Map<String, String> aldeiaSettings) {
        this(label, staticDeckTransport, jvmOptions, aldeiaSettings, List.of());
    }

    Transport(String label, String staticDeckTransport, List<String> jvmOptions, Map<String, String> aldeiaSettings,
            List<String> aldeiaRules) {
        this.label = label;
        this.staticDeckTransport = staticDeckTransport;
        this.jvmOptions = jvmOptions;
        this.aldeiaSettings = aldeiaSettings;
        this.aldeiaRules = aldeiaRules;
    }

    /** The row's name in the table, the CSV and the chart. */
    String label() {
        return label;
    }

    /** The name on the command line and in file names, e.g. {@code aldeia-static-sci}. */
    String optionName() {
        return OptionNames.of(this);
    }

    /** The {@code deck_transport} of a static DECK run, or null when the transport is not one. */
    String staticDeckTransport() {
        return staticDeckTransport;
    }

    /**
     * aldeia.conf keys of the row: of a static DECK row besides deck_transport (e.g. a larger
     * mtu); of a dynamic row, its whole configuration (none: no configuration file).
     */
    Map<String, String> aldeiaSettings() {
        return aldeiaSettings;
    }

    /** The lines of a dynamic row's aldeia.conf: its settings, then its rules (none: no file). */
    List<String> dynamicConfiguration() {
        List<String> lines = new ArrayList<>();
        aldeiaSettings.forEach((key, value) -> lines.add(key + " = " + value));
        lines.addAll(aldeiaRules);
        return lines;
    }

    /** Whether the row's sockets are java.net's own, made after {@link Aldeia#install()}. */
    boolean isInstalled() {
        return this == ALDEIA_INSTALLED || this == INSTALLED_PLAIN;
    }

    /** What both JVMs of this transport need on their command line. */
    List<String> jvmOptions() {
        return jvmOptions;
    }

    /**
     * Whether the row can run between two hosts: TCP sockets, Aldeia with no configuration, and
     * DECK over tcp, dynamic or static (whose nodes file then names the hosts' addresses). Not
     * Unix sockets, Aeron IPC or shared memory, which need one host, nor the rows of java.net
     * sockets with Aldeia installed, whose connect rule names loopback.
     */
    boolean crossesHosts() {
        return this == JDK_LOOPBACK || this == ALDEIA_DYNAMIC_AUTO || this == ALDEIA_DYNAMIC_TCP
                || "tcp".equals(staticDeckTransport);
    }

    boolean isAldeia() {
        return this == ALDEIA_DYNAMIC_AUTO || this == ALDEIA_DYNAMIC_TCP || this == ALDEIA_FABRIC_SHM
                || this == ALDEIA_FABRIC_TCP || isInstalled() || staticDeckTransport != null;
    }

    /** aldeia.conf keys and values in the order given (the file lists them so). */
    private static Map<String, String> settings(String... keysAndValues) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            settings.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return Collections.unmodifiableMap(settings);
    }

    static Transport parse(String optionName) {
        return OptionNames.find(Transport.class, optionName).orElseThrow(() -> new IllegalArgumentException(
                "unknown transport '" + optionName + "'; known: "
                + String.join(", ", java.util.Arrays.stream(values()).map(Transport::optionName).toList())));
    }
}
