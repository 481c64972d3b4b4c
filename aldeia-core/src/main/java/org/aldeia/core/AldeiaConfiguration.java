package org.aldeia.core;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The settings of one JVM's Aldeia environment (thesis 4.4.1), read from the file named by the
 * system property {@code aldeia.configuration}, or the defaults when there is none.
 *
 * <p>File format: {@code key = value} lines; {@code #} starts a comment (a whole line or the
 * rest of one); blank lines are ignored. Keys: {@code socket_type}, {@code mtu},
 * {@code deck_id}, {@code deck_nodes}, {@code deck_file}, {@code deck_transport},
 * {@code infiniband_port}, {@code infiniband_qos}, {@code send_region_size},
 * {@code receive_buffers}, {@code deck_msg_buf_limit}, {@code deck_medbuf_size},
 * {@code deck_mseg_size}. It may also hold {@code bind <address> <ports>} and
 * {@code connect <address> <ports>} rules saying which server sockets and which connecting
 * sockets use Aldeia where it is installed JVM-wide ({@link #rules()}). A file Aldeia cannot use
 * raises {@link AldeiaConfigurationException} whose message names the file, the line and the key
 * or rule. Instances are immutable.
 */
public final class AldeiaConfiguration {

    public static final String SOCKET_VAPI = "SOCKET_VAPI";
    public static final String SOCKET_DECK = "SOCKET_DECK";

    /** The system property naming the configuration file. */
    public static final String PROPERTY = "aldeia.configuration";

    /** Thesis 4.4.1: 87% of the messages of scientific codes are shorter than 1024 bytes. */
    public static final int DEFAULT_MTU = 1024;
    public static final int MIN_MTU = 64;
    public static final int MAX_MTU = 1 << 20;
    public static final String DEFAULT_DECK_FILE = "nodes";
    /**
     * DECK's network: {@code auto} reaches peers on this host through shared memory (sci) and
     * other hosts over tcp in dynamic runs, and means tcp in static runs; {@code tcp}; or
     * {@code sci}, static runs with every process on one host.
     */
    public static final String DEFAULT_DECK_TRANSPORT = "auto";
    public static final int DEFAULT_INFINIBAND_PORT = 1;
    public static final int DEFAULT_INFINIBAND_QOS = 0;
    /** Thesis Fig. 4.9: one registered region of 1 MiB per socket. */
    public static final int DEFAULT_SEND_REGION_SIZE = 1 << 20;
    public static final int DEFAULT_RECEIVE_BUFFERS = 16;

    /** Where {@link #source()} says the settings came from when there is no file. */
    public static final String DEFAULTS_SOURCE = "defaults";

    private final String source;
    private final String socketType;
    private final int mtu;
    private final Integer deckId;
    private final Integer deckNodes;
    private final Path deckFile;
    private final String deckTransport;
    private final int infinibandPort;
    private final int infinibandQos;
    private final int sendRegionSize;
    private final int receiveBuffers;
    private final DeckSciThresholds sciThresholds;
    private final SocketRules rules;

    AldeiaConfiguration(String source, String socketType, int mtu, Integer deckId, Integer deckNodes,
            Path deckFile, String deckTransport, int infinibandPort, int infinibandQos,
            int sendRegionSize, int receiveBuffers, DeckSciThresholds sciThresholds, SocketRules rules) {
        this.source = source;
        this.socketType = socketType;
        this.mtu = mtu;
        this.deckId = deckId;
        this.deckNodes = deckNodes;
        this.deckFile = deckFile;
        this.deckTransport = deckTransport;
        this.infinibandPort = infinibandPort;
        this.infinibandQos = infinibandQos;
        this.sendRegionSize = sendRegionSize;
        this.receiveBuffers = receiveBuffers;
        this.sciThresholds = sciThresholds;
        this.rules = rules;
    }

    /**
     * The configuration of this JVM: the file named by the system property
     * {@value #PROPERTY}, or {@link #defaults()} when the property is not set.
     *
     * @throws AldeiaConfigurationException if the property is set but names no readable file,
     *     or the file is not valid
     */
    public static AldeiaConfiguration load() throws AldeiaConfigurationException {
        String name = System.getProperty(PROPERTY);
        if (name == null) {
            return defaults();
        }
        String where = "system property " + PROPERTY;
        if (name.isBlank()) {
            throw new AldeiaConfigurationException(where, 0, null, "is set but empty; name a file or leave it unset");
        }
        Path file = Path.of(name);
        if (!Files.isRegularFile(file)) {
            throw new AldeiaConfigurationException(where, 0, null, "names " + file.toAbsolutePath()
                    + (Files.exists(file) ? ", which is not a regular file" : ", which does not exist"));
        }
        return parse(file);
    }

    /**
     * Reads one configuration file; {@code deck_file} is resolved against its directory.
     *
     * @throws AldeiaConfigurationException naming the file, line and key of the first error
     */
    public static AldeiaConfiguration parse(Path file) throws AldeiaConfigurationException {
        return ConfigurationFileParser.parse(Objects.requireNonNull(file, "file"));
    }

    /**
     * The settings without a file: the socket type is chosen automatically, mtu 1024,
     * InfiniBand port 1 and service level 0 (the thesis's defaults), dynamic DECK over tcp,
     * {@link SocketRules#defaults()}.
     */
    public static AldeiaConfiguration defaults() {
        return new AldeiaConfiguration(DEFAULTS_SOURCE, null, DEFAULT_MTU, null, null, Path.of(DEFAULT_DECK_FILE),
                DEFAULT_DECK_TRANSPORT, DEFAULT_INFINIBAND_PORT, DEFAULT_INFINIBAND_QOS,
                DEFAULT_SEND_REGION_SIZE, DEFAULT_RECEIVE_BUFFERS, DeckSciThresholds.DEFAULTS, SocketRules.defaults());
    }

    /** Whether the settings came from a file rather than {@link #defaults()}. */
    public boolean fromFile() {
        return !DEFAULTS_SOURCE.equals(source);
    }

    /** Where the settings came from: the file's path, or "defaults". */
    public String source() { return source; }

    /** {@code SOCKET_VAPI} or {@code SOCKET_DECK}; empty when Aldeia chooses by itself. */
    public Optional<String> socketType() { return Optional.ofNullable(socketType); }

    /** Largest block one descriptor carries, bytes. */
    public int mtu() { return mtu; }

    /** Static DECK: this process's id; empty in dynamic mode. */
    public OptionalInt deckId() { return deckId == null ? OptionalInt.empty() : OptionalInt.of(deckId); }

    /** Static DECK: number of processes; empty in dynamic mode. */
    public OptionalInt deckNodes() { return deckNodes == null ? OptionalInt.empty() : OptionalInt.of(deckNodes); }

    /** Static DECK: the nodes file, resolved against the configuration file's directory. */
    public Path deckFile() { return deckFile; }

    /** DECK transport: {@code tcp}, or {@code sci} (shared segments, every process on one host). */
    public String deckTransport() { return deckTransport; }

    /** Whether DECK is started statically (deck_id and deck_nodes given). */
    public boolean isStaticDeck() { return deckId != null; }

    public int infinibandPort() { return infinibandPort; }

    public int infinibandQos() { return infinibandQos; }

    /** Bytes of the registered send ring per socket (thesis: 1 MiB). */
    public int sendRegionSize() { return sendRegionSize; }

    /** MTU-sized receive buffers pre-posted per socket. */
    public int receiveBuffers() { return receiveBuffers; }

    /** The sizes of DECK's sci protocols (deck_msg_buf_limit, deck_medbuf_size, deck_mseg_size). */
    public DeckSciThresholds sciThresholds() { return sciThresholds; }

    /**
     * Which sockets use Aldeia where it is installed JVM-wide: the file's {@code bind} and
     * {@code connect} rules, or {@link SocketRules#defaults()} when it has none.
     */
    public SocketRules rules() { return rules; }

    @Override
    public String toString() {
        return "AldeiaConfiguration[source=" + source
                + ", socket_type=" + (socketType == null ? "(automatic)" : socketType)
                + ", mtu=" + mtu
                + ", deck_id=" + (deckId == null ? "(dynamic)" : deckId)
                + ", deck_nodes=" + (deckNodes == null ? "(dynamic)" : deckNodes)
                + ", deck_file=" + deckFile
                + ", deck_transport=" + deckTransport
                + ", infiniband_port=" + infinibandPort
                + ", infiniband_qos=" + infinibandQos
                + ", send_region_size=" + sendRegionSize
                + ", receive_buffers=" + receiveBuffers
                + ", deck_msg_buf_limit=" + sciThresholds.msgBufLimit()
                + ", deck_medbuf_size=" + sciThresholds.medbufSize()
                + ", deck_mseg_size=" + sciThresholds.msegSize()
                + ", rules=" + rules + "]";
    }
}
