package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.aldeia.core.spi.Channel;

/**
 * The client's side of a TCP-first connection's upgrade: the client bootstrap ({@link
 * ClientBootstrap#upgrade}) over the connection's control frames. It returns once the server's
 * CONNECTED is in and ours is sent: the server's endpoint admits our writes, which then move.
 */
final class ClientUpgrade extends PipedUpgrade {

    /** The client bootstrap over the pipe's streams. */
    @FunctionalInterface
    interface Bootstrap {
        Channel run(InputStream in, OutputStream out) throws IOException;
    }

    private final Bootstrap bootstrap;

    private ClientUpgrade(TcpFirstChannel connection, Bootstrap bootstrap, long waitMillis) {
        super(connection, waitMillis);
        this.bootstrap = bootstrap;
    }

    /** What starts a client connection's upgrade (TcpFirstChannel calls it once the connection is old enough). */
    static TcpFirstChannel.UpgradeStarter starter(Bootstrap bootstrap, long waitMillis) {
        return connection -> new ClientUpgrade(connection, bootstrap, waitMillis).start();
    }

    @Override
    Channel bootstrap(InputStream in, OutputStream out) throws IOException {
        return bootstrap.run(in, out);
    }
}
