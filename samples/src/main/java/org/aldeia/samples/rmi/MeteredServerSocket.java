package org.aldeia.samples.rmi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.nio.channels.ServerSocketChannel;
import java.util.Set;

/**
 * A server socket that reports every connection the wrapped server socket accepts to a
 * {@link ConnectionMeter} and hands it out as a {@link MeteredSocket}. Every method goes to the
 * wrapped socket; the superclass's own implementation is never used (so it never opens an OS
 * socket of its own).
 */
final class MeteredServerSocket extends ServerSocket {

    private final ServerSocket server;
    private final ConnectionMeter meter;

    MeteredServerSocket(ServerSocket server, ConnectionMeter meter) throws IOException {
        this.server = server;
        this.meter = meter;
    }

    @Override
    public Socket accept() throws IOException {
        Socket socket = server.accept();
        meter.accepted(socket);
        try {
            return new MeteredSocket(socket, meter);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    @Override
    public void bind(SocketAddress endpoint) throws IOException {
        server.bind(endpoint);
    }

    @Override
    public void bind(SocketAddress endpoint, int backlog) throws IOException {
        server.bind(endpoint, backlog);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    @Override
    public boolean isClosed() {
        return server.isClosed();
    }

    @Override
    public boolean isBound() {
        return server.isBound();
    }

    @Override
    public InetAddress getInetAddress() {
        return server.getInetAddress();
    }

    @Override
    public int getLocalPort() {
        return server.getLocalPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return server.getLocalSocketAddress();
    }

    @Override
    public ServerSocketChannel getChannel() {
        return server.getChannel();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        server.setSoTimeout(timeout);
    }

    @Override
    public int getSoTimeout() throws IOException {
        return server.getSoTimeout();
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        server.setReuseAddress(on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return server.getReuseAddress();
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        server.setReceiveBufferSize(size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return server.getReceiveBufferSize();
    }

    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
        server.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return server.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return server.supportedOptions();
    }

    @Override
    public void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        server.setPerformancePreferences(connectionTime, latency, bandwidth);
    }

    @Override
    public String toString() {
        return "Metered" + server;
    }
}
