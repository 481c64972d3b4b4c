package org.aldeia.core.bootstrap;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tickets this process holds for the server sockets it connected to ({@link
 * BootstrapProtocol}), by the address connected to and the public key they were issued to (a
 * process restarts its transport with a new one): with one, the next connect there needs one
 * round trip fewer. A ticket goes with the server's identity and public key, from which the pair
 * key of its proof comes. Bounded: {@link #PER_SERVER} tickets per address (a few threads
 * connecting at once each find one), {@link #MAX_SERVERS} addresses, the least recently used
 * forgotten first. Every ticket is taken once; thread-safe.
 */
public final class ClientTickets {

    public static final int PER_SERVER = 8;
    static final int MAX_SERVERS = 1024;

    /** One ticket and who issued it. */
    public record Ticket(byte[] ticket, byte[] serverIdentity, byte[] serverPublicKey) {}

    /** The tickets of the whole process: a ticket is worth as much to every socket. */
    public static final ClientTickets PROCESS = new ClientTickets();

    /** Where the tickets are for, and whom they were issued to (a ByteBuffer compares its content). */
    private record Holder(InetSocketAddress server, ByteBuffer ourPublicKey) {
        Holder(InetSocketAddress server, byte[] ourPublicKey) {
            this(server, ByteBuffer.wrap(ourPublicKey.clone()));
        }
    }

    private final Map<Holder, ArrayDeque<Ticket>> byServer = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Holder, ArrayDeque<Ticket>> eldest) {
            return size() > MAX_SERVERS;
        }
    };

    /** A ticket for {@code server} issued to {@code ourPublicKey}, removed from here, or null. */
    public synchronized Ticket take(InetSocketAddress server, byte[] ourPublicKey) {
        Holder holder = new Holder(server, ourPublicKey);
        ArrayDeque<Ticket> tickets = byServer.get(holder);
        if (tickets == null) {
            return null;
        }
        Ticket newest = tickets.pollLast();
        if (tickets.isEmpty()) {
            byServer.remove(holder);
        }
        return newest;
    }

    public synchronized void put(InetSocketAddress server, byte[] ourPublicKey, Ticket ticket) {
        ArrayDeque<Ticket> tickets = byServer.computeIfAbsent(new Holder(server, ourPublicKey), k -> new ArrayDeque<>());
        if (tickets.size() >= PER_SERVER) {
            tickets.pollFirst();
        }
        tickets.addLast(ticket);
    }

    /** Forgets the tickets for {@code server}: they come from a process no longer there, or it forgot them. */
    public synchronized void forget(InetSocketAddress server, byte[] ourPublicKey) {
        byServer.remove(new Holder(server, ourPublicKey));
    }

    /** How many tickets are held for {@code server}, for tests. */
    public synchronized int count(InetSocketAddress server, byte[] ourPublicKey) {
        ArrayDeque<Ticket> tickets = byServer.get(new Holder(server, ourPublicKey));
        return tickets == null ? 0 : tickets.size();
    }
}
