package org.aldeia.vapi;

import java.io.IOException;
import org.aldeia.core.AldeiaConfiguration;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;

/**
 * {@code socket_type = SOCKET_VAPI}: queue pairs on real InfiniBand / RoCE through
 * {@code libaldeiaverbs.so}, a vapi.h implementation over verbs.
 */
public final class VerbsTransportProvider implements TransportProvider {

    /** The library's name, without {@code lib} and {@code .so}. */
    static final String LIBRARY = "aldeiaverbs";
    /** The first adapter, as the thesis's VAPI named it. */
    static final String HCA = "InfiniHost0";

    @Override
    public String socketType() {
        return AldeiaConfiguration.SOCKET_VAPI;
    }

    @Override
    public boolean isAvailable() {
        return VapiLibrary.isLoadable(LIBRARY);
    }

    @Override
    public Transport open(AldeiaConfiguration configuration) throws IOException {
        Vapi vapi = VapiLibrary.load(LIBRARY, "socket_type = " + AldeiaConfiguration.SOCKET_VAPI);
        return VapiTransport.open(vapi, HCA, configuration, PeerIntroducer.none(),
                "VAPI verbs on " + HCA + " port " + configuration.infinibandPort()
                + ", service level " + configuration.infinibandQos());
    }
}
