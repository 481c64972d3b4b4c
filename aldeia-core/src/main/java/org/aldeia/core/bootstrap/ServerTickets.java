package org.aldeia.core.bootstrap;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The tickets a server socket issued ({@link BootstrapProtocol}): each one is for the process
 * whose public key it was issued to, for {@link #LIFETIME_NANOS}, and is taken once. At most
 * {@link #MAX_TICKETS} are kept, the oldest dropped first: a dropped ticket costs its client the
 * challenge round trip and nothing else. Thread-safe: the selector takes, the workers issue.
 */
public final class ServerTickets {

    public static final int MAX_TICKETS = 4096;
    public static final long LIFETIME_NANOS = TimeUnit.MINUTES.toNanos(10);

    private record Issued(byte[] clientPublicKey, long nanos) {}

    /** By ticket (a ByteBuffer compares its content), oldest first. */
    private final Map<ByteBuffer, Issued> issued = new LinkedHashMap<>();
    private final LongSupplier clock;

    public ServerTickets() {
        this(System::nanoTime);
    }

    /** @param clock nanoTime, or a test's */
    public ServerTickets(LongSupplier clock) {
        this.clock = clock;
    }

    /** A fresh ticket for the client with {@code clientPublicKey}. */
    public synchronized byte[] issue(byte[] clientPublicKey) {
        byte[] ticket = BootstrapKeys.nonce();
        dropExpired(clock.getAsLong());
        if (issued.size() >= MAX_TICKETS) {
            Iterator<ByteBuffer> oldest = issued.keySet().iterator();
            oldest.next();
            oldest.remove();
        }
        issued.put(ByteBuffer.wrap(ticket), new Issued(clientPublicKey.clone(), clock.getAsLong()));
        return ticket;
    }

    /** Whether {@code ticket} is one of ours, unspent and unexpired, issued to {@code clientPublicKey}. */
    public synchronized boolean valid(byte[] ticket, byte[] clientPublicKey) {
        Issued found = issued.get(ByteBuffer.wrap(ticket));
        return found != null && clock.getAsLong() - found.nanos < LIFETIME_NANOS
                && MessageDigest.isEqual(found.clientPublicKey, clientPublicKey);
    }

    /** Spends {@code ticket}: true for the one caller that took it while it was valid. */
    public synchronized boolean take(byte[] ticket, byte[] clientPublicKey) {
        if (!valid(ticket, clientPublicKey)) {
            return false;
        }
        issued.remove(ByteBuffer.wrap(ticket));
        return true;
    }

    public synchronized int size() {
        return issued.size();
    }

    private void dropExpired(long now) {
        for (Iterator<Issued> i = issued.values().iterator(); i.hasNext(); ) {
            if (now - i.next().nanos < LIFETIME_NANOS) {
                return; // the rest are younger
            }
            i.remove();
        }
    }
}
