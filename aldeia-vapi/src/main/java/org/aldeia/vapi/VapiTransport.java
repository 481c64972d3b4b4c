package org.aldeia.vapi;

import com.sun.jna.Memory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.IntSupplier;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The VAPI environment of a JVM (thesis 4.4.2, first socket): the opened HCA, its port's LID
 * and a protection domain. Generic over the library behind {@link Vapi}: the real-verbs
 * provider and MicroVAPI's provider both build one with {@link #open}.
 */
public final class VapiTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(VapiTransport.class);
    /**
     * A fabric's name, with its NUL: with "fabric " and a host's boot id ({@link FabricRoute}) a
     * route name stays within the bootstrap's 200 characters.
     */
    private static final int ROUTE_NAME_MAX = 128;

    private final Vapi vapi;
    private final long hca;
    private final long pd;
    private final int lid;
    private final int localId;
    private final AldeiaConfiguration configuration;
    private final PeerIntroducer introducer;
    private final String description;
    private final String route;
    private boolean closed;
    private volatile boolean trimIdleRings;

    private VapiTransport(Vapi vapi, long hca, long pd, int lid, int localId,
            AldeiaConfiguration configuration, PeerIntroducer introducer, String description, String route) {
        this.vapi = vapi;
        this.route = route;
        this.hca = hca;
        this.pd = pd;
        this.lid = lid;
        this.localId = localId;
        this.configuration = configuration;
        this.introducer = introducer;
        this.description = description;
    }

    /** {@link #open(Vapi, String, AldeiaConfiguration, PeerIntroducer, IntSupplier, String)} with the port's LID as id. */
    public static VapiTransport open(Vapi vapi, String hcaId, AldeiaConfiguration configuration,
            PeerIntroducer introducer, String description) throws IOException {
        return open(vapi, hcaId, configuration, introducer, null, description);
    }

    /**
     * Opens the HCA by name, queries the configured port's LID and allocates the protection
     * domain.
     *
     * @param hcaId the HCA name: the library's init string ("fabric:provider=...", "microvapi:...")
     * @param localId this side's information 1, asked once the HCA is open (MicroVAPI: the
     *     DECK id, wider than a LID); {@code null} for the port's LID
     * @param description for {@link #description()}; the LID and MTU are appended
     */
    public static VapiTransport open(Vapi vapi, String hcaId, AldeiaConfiguration configuration,
            PeerIntroducer introducer, IntSupplier localId, String description) throws IOException {
        validate(configuration);
        long[] handle = new long[1];
        VapiException.check(vapi, "EVAPI_get_hca_hndl(\"" + hcaId + "\")", vapi.EVAPI_get_hca_hndl(hcaId, handle));
        long hca = handle[0];
        try {
            int lid = queryLid(vapi, hca, configuration.infinibandPort());
            String route = queryRoute(vapi, hca);
            VapiException.check(vapi, "VAPI_alloc_pd", vapi.VAPI_alloc_pd(hca, handle));
            int id = localId == null ? lid : localId.getAsInt();
            VapiTransport transport = new VapiTransport(vapi, hca, handle[0], lid, id, configuration,
                    introducer, description + ", lid " + lid + ", mtu " + configuration.mtu(), route);
            LOG.debug("opened {}", transport.description);
            return transport;
        } catch (IOException | RuntimeException e) {
            int ret = vapi.EVAPI_release_hca_hndl(hca);
            if (ret != VapiConstants.VAPI_OK) {
                e.addSuppressed(VapiException.of(vapi, "EVAPI_release_hca_hndl", ret));
            }
            throw e;
        }
    }

    private static void validate(AldeiaConfiguration c) throws IOException {
        String problem = null;
        if (c.mtu() <= 0) {
            problem = "mtu " + c.mtu() + " is not positive";
        } else if (c.sendRegionSize() < c.mtu()) {
            problem = "the send region (" + c.sendRegionSize() + " bytes) is smaller than mtu " + c.mtu();
        } else if (c.receiveBuffers() < 1) {
            problem = "receive buffers " + c.receiveBuffers() + " is less than 1";
        } else if (c.infinibandPort() < 1 || c.infinibandPort() > 255) {
            problem = "infiniband_port " + c.infinibandPort() + " is not in 1..255";
        } else if (c.infinibandQos() < 0 || c.infinibandQos() > 15) {
            problem = "infiniband_qos " + c.infinibandQos() + " is not a service level 0..15";
        }
        if (problem != null) {
            throw new IOException("configuration " + c.source() + ": " + problem);
        }
    }

    private static int queryLid(Vapi vapi, long hca, int port) throws VapiException {
        try (Memory prop = new Memory(VapiStructs.HcaPort.SIZE)) {
            prop.clear();
            VapiException.check(vapi, "VAPI_query_hca_port_prop(port " + port + ")",
                    vapi.VAPI_query_hca_port_prop(hca, (byte) port, prop));
            if (VapiStructs.HcaPort.state(prop) != VapiConstants.PORT_ACTIVE) {
                LOG.warn("HCA port {} is in state {}, not active", port, VapiStructs.HcaPort.state(prop));
            }
            return VapiStructs.HcaPort.lid(prop);
        }
    }

    /**
     * The route of a library on a fabric ({@link FabricRoute}): "fabric " and its "provider;fabric
     * name", which two processes share when they reach each other through it. A library on no
     * fabric (VAPI_ENOSYS) is MicroVAPI, whose peers are DECK's: "deck".
     */
    private static String queryRoute(Vapi vapi, long hca) throws VapiException {
        byte[] name = new byte[ROUTE_NAME_MAX];
        int ret = vapi.EVAPI_query_hca_fabric(hca, name, name.length);
        if (ret == VapiConstants.VAPI_ENOSYS) {
            return "deck";
        }
        VapiException.check(vapi, "EVAPI_query_hca_fabric", ret);
        StringBuilder fabric = new StringBuilder();
        for (int i = 0; i < name.length && name[i] != 0; i++) {
            fabric.append(name[i] >= 0x20 && name[i] <= 0x7e ? (char) name[i] : '?');
        }
        return FabricRoute.of(fabric.toString(), FabricRoute.thisHost());
    }

    /**
     * For a library that copies every send when it is posted (MicroVAPI): the send rings of its
     * sockets give their pages back once idle ({@link RingTrimmer}). Never for real verbs, whose
     * HCA reads registered memory.
     */
    public VapiTransport trimmingIdleRings() {
        trimIdleRings = true;
        return this;
    }

    @Override
    public String description() {
        return description;
    }

    /** This side's information 1. */
    public int localId() {
        return localId;
    }

    /** The LID of the configured port. */
    public int lid() {
        return lid;
    }

    /**
     * Creates the socket's completion queues, queue pair and registered regions: a send ring
     * of {@code sizes.sendRegionSize()} bytes and {@code sizes.receiveBuffers()} mtu-sized
     * receive buffers, with a receive queue as deep as {@code sizes.receiveWindow()}.
     *
     * @throws IllegalArgumentException if the send ring cannot hold one mtu-sized block
     */
    @Override
    public synchronized Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException {
        if (closed) {
            throw new IOException("the VAPI transport (" + description + ") is closed");
        }
        int mtu = configuration.mtu();
        if (sizes.sendRegionSize() < mtu) {
            throw new IllegalArgumentException("socket " + socketId + ": a send ring of " + sizes.sendRegionSize()
                    + " bytes cannot hold one block of mtu " + mtu);
        }
        QueuePair pair = QueuePair.create(vapi, hca, pd, mtu, sizes.sendRegionSize(), sizes.receiveBuffers(),
                sizes.receiveWindow(), trimIdleRings);
        return new VapiEndpoint(pair, socketId, localId, introducer,
                configuration.infinibandQos(), configuration.infinibandPort());
    }

    @Override
    public String route() {
        return route;
    }

    @Override
    public byte[] publicKey() {
        return introducer.publicKey();
    }

    /** Information 1, 4 bytes big-endian. */
    @Override
    public byte[] identity() {
        return ByteBuffer.allocate(Integer.BYTES).putInt(localId).array();
    }

    /** Information 1 of a {@link ConnectionInfo}; one that does not parse is not a VAPI peer's. */
    @Override
    public byte[] identityOf(byte[] remoteInfo) throws IOException {
        return ByteBuffer.allocate(Integer.BYTES).putInt(ConnectionInfo.parse(remoteInfo).id()).array();
    }

    /** The pair key with the peer whose information 1 is {@code remoteIdentity} (the introducer checks it against the key). */
    @Override
    public byte[] pairKey(byte[] remoteIdentity, byte[] peerPublicKey) throws IOException {
        if (remoteIdentity == null || remoteIdentity.length != Integer.BYTES) {
            throw new IOException("malformed VAPI identity from the peer: "
                    + (remoteIdentity == null ? "none" : remoteIdentity.length + " bytes") + ", expected 4");
        }
        int id = ByteBuffer.wrap(remoteIdentity).getInt();
        return introducer.pairKey(id, peerPublicKey, "VAPI peer " + id);
    }

    @Override
    public boolean knowsPairKey(byte[] peerPublicKey) {
        return introducer.knowsKey(peerPublicKey);
    }

    /** Frees the protection domain and releases the HCA; call after every channel closed. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        int dealloc = vapi.VAPI_dealloc_pd(hca, pd);
        VapiException deallocFailure = dealloc == VapiConstants.VAPI_OK ? null
                : VapiException.of(vapi, "VAPI_dealloc_pd", dealloc);
        int release = vapi.EVAPI_release_hca_hndl(hca);
        if (release != VapiConstants.VAPI_OK) {
            VapiException e = VapiException.of(vapi, "EVAPI_release_hca_hndl", release);
            if (deallocFailure != null) {
                e.addSuppressed(deallocFailure);
            }
            throw e;
        }
        if (deallocFailure != null) {
            throw deallocFailure;
        }
    }
}
