package org.aldeia.core.config;

import java.nio.file.Path;
import java.util.List;

/**
 * Every key of aldeia.conf, declared once: its name, who reads it, what it means, its default
 * and what it allows, and how its value is read ({@link ConfigurationValue}). The parser reads
 * the keys through it ({@link ConfigurationFileParser}); the README's configuration table and
 * config/aldeia.conf.example are checked against it by a test (ConfigurationKeyDocumentationTest),
 * so none of the three can drift from the others. Rules between keys (deck_id needs deck_nodes,
 * the protocol-2 buffer holds its largest message, ...) are the parser's.
 */
public enum ConfigurationKey {

    SOCKET_TYPE("socket_type", "both",
            "provider: `SOCKET_VAPI` (VAPI over libfabric: fabric hardware, or the `fabric_provider` configured) or "
                    + "`SOCKET_DECK` (MicroVAPI over DECK)",
            null, "chosen: VAPI when its adapter opens here (on `fabric_provider`, else on a hardware provider "
                    + "libfabric offers), else DECK", "`SOCKET_*` of an installed provider",
            "SOCKET_DECK", ConfigurationValue.matching("SOCKET_[A-Z0-9_]+", "a socket type ("
                    + AldeiaConfiguration.SOCKET_VAPI + ", " + AldeiaConfiguration.SOCKET_DECK
                    + " or another installed provider's SOCKET_* name)")),
    MTU("mtu", "both", "largest block one descriptor carries; writes are cut into blocks ≤ mtu",
            AldeiaConfiguration.DEFAULT_MTU, "65536", "64 .. 1048576", null,
            ConfigurationValue.range(AldeiaConfiguration.MIN_MTU, AldeiaConfiguration.MAX_MTU)),
    SEND_REGION_SIZE("send_region_size", "both", "bytes of the registered send ring per socket",
            1 << 20, "1048576", "mtu .. 1073741824", null, ConfigurationValue.range(1, 1 << 30)),
    /*
     * Eight, not the sixteen of earlier versions: posted receives are taken in order, so a
     * stream cycles through all of them, and 16 x 64 KiB beside the reader's 1 MiB array and
     * DECK's protocol-2 buffer no longer fit the reader's 2 MiB L2 (the reader, doing two copies,
     * is the stream's bottleneck: memcpy 63% of its CPU). Fewer cost small messages: each takes
     * a buffer, and the reader re-posts half of them in one call, so with four a 64 B ping-pong
     * paid a call every two messages. Pinned, alternating runs: 1 MiB-write stream 7.2 GB/s
     * with 16, 7.6-7.8 with 8, 7.8-7.9 with 4; 1 MiB one-way 154-163 / 115 / 109-118 us; 64 B
     * one-way median 0.51-0.54 / 0.52-0.54 / 0.61 us. Over DECK tcp (256 KiB messages) 4, 8 and
     * 16 streamed alike. Data that finds no buffer posted waits in MicroVAPI's queue and is
     * handed over when the reader posts.
     */
    RECEIVE_BUFFERS("receive_buffers", "both", "mtu-sized receive buffers pre-posted per socket",
            8, "8", "2 .. 4096", null, ConfigurationValue.range(2, 4096)),
    RECEIVE_WINDOW("receive_window", "both",
            "bytes a socket holds for its application before the peer's writer blocks (TCP's receive buffer; "
                    + "SO_RCVBUF when set); memory grows to it only while data waits unread",
            8 << 20, "8388608", "65536 .. 1073741824", null, ConfigurationValue.range(65_536, 1 << 30)),
    PEER_TIMEOUT("peer_timeout", "both",
            "milliseconds a peer JVM may take or answer nothing (stopped, or its host cut off) before its connections "
                    + "fail with an IOException; a dead peer is noticed within 0.2 s whatever this says",
            10_000, "10000", "100 .. 600000", null, ConfigurationValue.range(100, 600_000)),
    UPGRADE_AFTER("upgrade_after", "client sockets",
            "milliseconds a new connection runs on plain TCP before it moves, while carrying data, to its route "
                    + "(shared memory, DECK tcp, a fabric); a connection closed sooner never pays for one. 0: each "
                    + "connection is set up on its route at connect",
            2, "2", "0 .. 3600000", null, ConfigurationValue.range(0, 3_600_000)),
    BOOTSTRAP_TIMEOUT("bootstrap_timeout", "server sockets",
            "milliseconds a connecting client has for each step of its bootstrap (under a bind rule, also to send "
                    + "its first bytes before it counts as a plain TCP client); a client that takes longer is closed",
            3000, "3000", "100 .. 60000", null, ConfigurationValue.range(100, 60_000)),
    BOOTSTRAP_PER_ADDRESS("bootstrap_per_address", "server sockets",
            "connections from one address a server socket waits on before they have proved themselves (the "
                    + "bootstrap's HELLO and proof); a newer one pushes out the oldest",
            64, "64", "1 .. 65536", null, ConfigurationValue.range(1, 65_536)),
    DECK_ID("deck_id", "DECK", "this JVM's DECK id in a static run (needs `deck_nodes`)",
            null, "none: dynamic DECK", "0 .. deck_nodes−1", "0", ConfigurationValue.range(0, 4095)),
    DECK_NODES("deck_nodes", "DECK", "number of DECK processes of a static run (needs `deck_id`)",
            null, "none: dynamic DECK", "1 .. 4096", "2", ConfigurationValue.range(1, 4096)),
    DECK_FILE("deck_file", "DECK", "nodes file, relative to the configuration file's directory",
            Path.of("nodes"), "`nodes`", "a readable file: line i = `host`, `host:port` or `[v6]:port` of node i", null,
            ConfigurationValue.path()),
    DECK_SECRET_FILE("deck_secret_file", "DECK static",
            "the run secret every JVM of a static run proves itself with: a file of random bytes, the same for the "
                    + "whole run, relative to the configuration file's directory (deckrun and DeckLauncher make one "
                    + "and pass it in the environment instead)",
            null, "none: the `DECK_SECRET_FILE` deckrun sets", "a file of 16 .. 4096 bytes, this user's, mode 0600",
            "run.secret", ConfigurationValue.secretFile(16, 4096)),
    DECK_TRANSPORT("deck_transport", "DECK",
            "network under DECK. `auto`: in a dynamic run, each peer JVM on this host is reached through shared "
                    + "memory (sci) and any other over tcp (each connection's first contact with a peer logs which, "
                    + "e.g. `Aldeia peer 127.0.0.1 (DECK node 123456): sci (same host: shared memory, node 1)`); in a "
                    + "static run, tcp. `tcp`: always tcp. `sci`: shared segments, static runs with every process on "
                    + "one host",
            "auto", "`auto`", "`auto`, `tcp`, `sci` (`gm` reserved)", null,
            ConfigurationValue.choice(List.of("auto", "tcp", "sci"), List.of("gm"), "a DECK transport")),
    DECK_LISTEN_ADDRESS("deck_listen_address", "DECK dynamic",
            "the address a dynamic DECK process listens on for peers on other hosts, and tells them in their "
                    + "bootstrap: e.g. the cluster network's, when the application's port is reached over another",
            null, "the address each such peer's bootstrap came to", "an IPv4 or IPv6 address of this host", "10.1.0.5",
            ConfigurationValue.localAddress()),
    DECK_TCP_ENCRYPTION("deck_tcp_encryption", "DECK tcp",
            "`on`: every DECK tcp connection runs TLS 1.3, keyed from the key its two processes proved (no "
                    + "certificates); every JVM of a cluster must say the same",
            Boolean.FALSE, "`off`", "`on`, `off`", null, ConfigurationValue.onOff()),
    DECK_MSG_BUF_LIMIT("deck_msg_buf_limit", "DECK sci, auto",
            "largest message sent by protocol 2 (through the per-sender buffer); larger ones go by protocol 3, "
                    + "zero-copy",
            DeckSciThresholds.DEFAULT_MSG_BUF_LIMIT, "66560", "63 .. 16777216", null,
            ConfigurationValue.range(63, 1 << 24)),
    DECK_MEDBUF_SIZE("deck_medbuf_size", "DECK sci, auto", "protocol-2 buffer per sender and mailbox",
            DeckSciThresholds.DEFAULT_MEDBUF_SIZE, "532992", "128 .. 1073741824, ≥ deck_msg_buf_limit rounded up to 64, + 64", null,
            ConfigurationValue.range(128, 1 << 30)),
    DECK_MSEG_SIZE("deck_mseg_size", "DECK sci, auto", "message segment holding large message buffers",
            DeckSciThresholds.DEFAULT_MSEG_SIZE, "67108864", "65536 .. 1073741824", null,
            ConfigurationValue.range(1 << 16, 1 << 30)),
    FABRIC_PROVIDER("fabric_provider", "VAPI",
            "the libfabric provider of the fabric route: `verbs` (InfiniBand, RoCE), `efa` (AWS), `cxi` (Slingshot), "
                    + "`opx` or `psm3` (Omni-Path), or `tcp` and `shm` (any machine; tcp and shm are what the route is "
                    + "tested on)",
            null, "the first hardware provider libfabric offers", "a provider name: 1 .. 63 letters, digits, `_`, `-`",
            "verbs", ConfigurationValue.matching("[A-Za-z0-9_-]{1,63}",
                    "a libfabric provider name (1 to 63 letters, digits, _ and -)")),
    FABRIC_DOMAIN("fabric_domain", "VAPI",
            "the provider's domain: an adapter (`mlx5_0`), for tcp a network interface (`lo`, `eth0`)",
            null, "domain number `infiniband_port` of the provider",
            "a domain name: 1 .. 63 letters, digits, `_`, `-`, `.`", "mlx5_0",
            ConfigurationValue.matching("[A-Za-z0-9_.-]{1,63}", "a libfabric domain name (1 to 63 letters, digits, _, - "
                    + "and .)")),
    INFINIBAND_PORT("infiniband_port", "VAPI", "which of the provider's domains (HCA port), when `fabric_domain` "
            + "names none", 1, "1", "1 .. 255", null, ConfigurationValue.range(1, 255)),
    INFINIBAND_QOS("infiniband_qos", "VAPI", "InfiniBand service level; on libfabric a traffic class: 0 the "
            + "provider's, 1 best effort, 2 low latency, 3 dedicated access, 4 bulk data, 5 scavenger", 0, "0",
            "0 .. 5", null, ConfigurationValue.range(0, 5));

    private final String key;
    private final String usedBy;
    private final String meaning;
    private final Object defaultValue;
    private final String defaultText;
    private final String allowed;
    private final String example;
    private final ConfigurationValue value;

    /**
     * @param defaultValue the value when the key is not given; null: none (the key's absence means
     *     something, said by {@code defaultText})
     * @param example for a key without a default, the value config/aldeia.conf.example shows; null
     *     for the others, whose example line shows the default
     */
    ConfigurationKey(String key, String usedBy, String meaning, Object defaultValue, String defaultText,
            String allowed, String example, ConfigurationValue value) {
        this.key = key;
        this.usedBy = usedBy;
        this.meaning = meaning;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.allowed = allowed;
        this.example = example;
        this.value = value;
    }

    /** The name written in aldeia.conf. */
    public String key() {
        return key;
    }

    /** The value when the key is not given, or null when its absence means something of its own. */
    Object defaultValue() {
        return defaultValue;
    }

    /** The value config/aldeia.conf.example writes for it: its default, or an example. */
    String exampleValue() {
        if (example != null) {
            return example;
        }
        return defaultText.replace("`", "");
    }

    ConfigurationValue value() {
        return value;
    }

    /** The key's row of the README's configuration table. */
    String readmeRow() {
        return "| `" + key + "` | " + usedBy + " | " + meaning + " | " + defaultText + " | " + allowed + " |";
    }

    /** The key named {@code key}, or null. */
    static ConfigurationKey named(String key) {
        for (ConfigurationKey k : values()) {
            if (k.key.equals(key)) {
                return k;
            }
        }
        return null;
    }

    /** Every key's name, in declaration order, for error messages. */
    static String names() {
        return String.join(", ", java.util.Arrays.stream(values()).map(ConfigurationKey::key).toList());
    }
}
