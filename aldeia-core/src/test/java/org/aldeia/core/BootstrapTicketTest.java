package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.aldeia.core.bootstrap.BootstrapKeys;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.ClientTickets;
import org.aldeia.core.bootstrap.ServerTickets;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Tickets (bootstrap v4, {@link BootstrapProtocol}): a client that connected before gets a
 * ticket and resumes with it, without the challenge; a ticket serves once, so a replayed HELLO
 * gets the challenge and costs no endpoint; a ticket proves nothing without the pair key, and a
 * wrong proof does not spend it; a ticket issued to one process is worth nothing to another.
 */
@Timeout(60)
class BootstrapTicketTest {

    private static final EndpointSizes SIZES = new EndpointSizes(64 * 1024, 64 * 1024, 16 * 1024);

    private final AldeiaEnvironment server = TestEnvironments.inMemory();
    private final AldeiaEnvironment client = TestEnvironments.inMemory();
    private AldeiaServerSocket listener;

    @BeforeEach
    void listen() throws IOException {
        listener = TestEnvironments.listen(server);
    }

    @AfterEach
    void closeAll() throws IOException {
        try (AldeiaServerSocket l = listener; AldeiaEnvironment s = server; AldeiaEnvironment c = client) {
            // closed in reverse order
        }
    }

    private InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
    }

    /** A connection through the legitimate path, with a byte each way; the client keeps the ticket it got. */
    private void legitimateExchange(AldeiaEnvironment from) throws Exception {
        try (TestEnvironments.Pair pair = TestEnvironments.connect(from, listener)) {
            pair.client().getOutputStream().write(42);
            pair.client().getOutputStream().flush();
            assertEquals(42, pair.server().getInputStream().read());
            pair.server().getOutputStream().write(43);
            pair.server().getOutputStream().flush();
            assertEquals(43, pair.client().getInputStream().read());
        }
    }

    /** A HELLO of {@code from}'s transport with {@code ticket}, proved with the pair key, or with {@code proof} when given. */
    private static byte[] helloWith(Transport from, Endpoint endpoint, ClientTickets.Ticket ticket, byte[] proof)
            throws IOException {
        byte[] nonce = BootstrapKeys.nonce(), info = endpoint.localInfo();
        if (proof == null) {
            byte[] unproved = BootstrapProtocol.helloBody(from.publicKey(), nonce, ticket.ticket(),
                    new byte[BootstrapProtocol.PROOF_BYTES], from.route(), info);
            proof = BootstrapKeys.ticketProof(from.pairKey(ticket.serverIdentity(), ticket.serverPublicKey()), unproved);
        }
        return BootstrapProtocol.helloBody(from.publicKey(), nonce, ticket.ticket(), proof, from.route(), info);
    }

    /**
     * Sends the start and {@code hello} on a fresh connection and returns the mode of the
     * server's reply; a RESUMED connection is carried through as a client does (the INFO and its
     * MAC checked, {@code endpoint} connected with {@code key}, CONNECTED both ways) and accepted.
     */
    private byte sendHello(byte[] hello, Endpoint endpoint, byte[] key) throws IOException {
        try (SocketChannel raw = SocketChannel.open(address())) {
            raw.write(BootstrapProtocol.startAndHello(hello));
            raw.socket().setSoTimeout(5000);
            DataInputStream in = new DataInputStream(raw.socket().getInputStream());
            assertEquals(BootstrapProtocol.MAGIC, in.readInt());
            assertEquals(BootstrapProtocol.VERSION, in.readInt());
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            BootstrapProtocol.Reply reply = BootstrapProtocol.Reply.parse(body, "the server");
            if (reply.mode() == BootstrapProtocol.RESUMED) {
                byte[] transcript = BootstrapKeys.transcript(hello, reply.covered());
                assertTrue(BootstrapKeys.verify(key, BootstrapKeys.SERVER, transcript, reply.proof()));
                byte[] info = new byte[in.readInt()], next = new byte[BootstrapProtocol.TICKET_BYTES];
                byte[] mac = new byte[BootstrapProtocol.PROOF_BYTES];
                in.readFully(info);
                in.readFully(next);
                in.readFully(mac);
                assertTrue(BootstrapKeys.verifyInfo(key, transcript, info, next, mac), "the INFO's MAC");
                try (Channel channel = endpoint.connect(info, InetAddress.getLoopbackAddress(), key)) {
                    assertEquals(BootstrapProtocol.CONNECTED, in.read());
                    raw.write(ByteBuffer.wrap(new byte[] {BootstrapProtocol.CONNECTED}));
                    listener.accept().close();
                }
            }
            return reply.mode();
        }
    }

    private static byte[] keyOf(Transport transport, ClientTickets.Ticket ticket) throws IOException {
        return transport.pairKey(ticket.serverIdentity(), ticket.serverPublicKey());
    }

    private ClientTickets.Ticket takeTicket(AldeiaEnvironment of) throws IOException {
        return ClientTickets.PROCESS.take(address(), of.transport().publicKey());
    }

    @Test
    void aClientResumesWithItsTicketAndEachConnectionGivesTheNext() throws Exception {
        Transport transport = client.transport();
        assertNull(takeTicket(client), "a ticket before any connection");
        legitimateExchange(client);
        assertEquals(1, ClientTickets.PROCESS.count(address(), transport.publicKey()), "one ticket per connection");
        legitimateExchange(client); // resumed with it: its INFO gave the next one
        assertEquals(1, ClientTickets.PROCESS.count(address(), transport.publicKey()));
        legitimateExchange(client);
    }

    @Test
    void aTicketServesOnceSoAReplayedHelloGetsTheChallengeAndNoEndpoint() throws Exception {
        legitimateExchange(client);
        ClientTickets.Ticket ticket = takeTicket(client);
        assertNotNull(ticket);
        Transport transport = client.transport();
        try (Endpoint endpoint = transport.createEndpoint(0, SIZES)) {
            byte[] hello = helloWith(transport, endpoint, ticket, null);
            int endpoints = InMemoryTransportProvider.openEndpoints() - 1; // without this test's own
            assertEquals(BootstrapProtocol.RESUMED, sendHello(hello, endpoint, keyOf(transport, ticket)),
                    "a genuine ticket resumes");
            TestEnvironments.awaitOpenEndpoints(endpoints); // both ends of the resumed connection closed
            assertEquals(BootstrapProtocol.CHALLENGE, sendHello(hello, endpoint, null), "the same HELLO again");
            assertEquals(endpoints, InMemoryTransportProvider.openEndpoints(), "a replayed HELLO cost an endpoint");
        }
        legitimateExchange(client);
    }

    @Test
    void aWrongProofGetsTheChallengeAndLeavesTheTicketValid() throws Exception {
        legitimateExchange(client);
        ClientTickets.Ticket ticket = takeTicket(client);
        Transport transport = client.transport();
        try (Endpoint endpoint = transport.createEndpoint(0, SIZES)) {
            byte[] forged = new byte[BootstrapProtocol.PROOF_BYTES];
            forged[0] = 1;
            assertEquals(BootstrapProtocol.CHALLENGE, sendHello(helloWith(transport, endpoint, ticket, forged), endpoint, null));
            assertEquals(BootstrapProtocol.RESUMED,
                    sendHello(helloWith(transport, endpoint, ticket, null), endpoint, keyOf(transport, ticket)),
                    "an attacker who saw the ticket spent it without the key");
        }
    }

    @Test
    void aTicketIssuedToAnotherProcessIsWorthNothing() throws Exception {
        legitimateExchange(client);
        ClientTickets.Ticket stolen = takeTicket(client);
        try (AldeiaEnvironment other = TestEnvironments.inMemory()) {
            legitimateExchange(other); // so that the server knows this process's key: a ticket is its only lack
            Transport thief = other.transport();
            try (Endpoint endpoint = thief.createEndpoint(0, SIZES)) {
                assertEquals(BootstrapProtocol.CHALLENGE, sendHello(helloWith(thief, endpoint, stolen, null), endpoint, null));
            }
        }
        Transport transport = client.transport();
        try (Endpoint endpoint = transport.createEndpoint(0, SIZES)) {
            assertEquals(BootstrapProtocol.RESUMED,
                    sendHello(helloWith(transport, endpoint, stolen, null), endpoint, keyOf(transport, stolen)));
        }
    }

    @Test
    void theServerKeepsABoundedNumberOfTicketsEachForItsClientAndOnce() {
        long[] now = {0};
        ServerTickets tickets = new ServerTickets(() -> now[0]);
        byte[] alice = new byte[BootstrapProtocol.KEY_BYTES], bob = new byte[BootstrapProtocol.KEY_BYTES];
        bob[0] = 1;
        byte[] first = tickets.issue(alice);
        assertEquals(false, tickets.take(first, bob), "issued to another key");
        assertEquals(true, tickets.take(first, alice));
        assertEquals(false, tickets.take(first, alice), "taken twice");
        byte[] old = tickets.issue(alice);
        now[0] += ServerTickets.LIFETIME_NANOS;
        assertEquals(false, tickets.valid(old, alice), "expired");
        for (int i = 0; i < ServerTickets.MAX_TICKETS + 10; i++) {
            tickets.issue(alice);
        }
        assertEquals(ServerTickets.MAX_TICKETS, tickets.size());
    }

    @Test
    void theClientKeepsABoundedNumberOfTicketsPerServerNewestFirst() {
        ClientTickets tickets = new ClientTickets();
        InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(), 1);
        byte[] us = new byte[BootstrapProtocol.KEY_BYTES], them = new byte[BootstrapProtocol.KEY_BYTES];
        them[0] = 1;
        for (int i = 0; i < ClientTickets.PER_SERVER + 3; i++) {
            tickets.put(server, us, new ClientTickets.Ticket(new byte[] {(byte) i}, new byte[0], new byte[0]));
        }
        assertEquals(ClientTickets.PER_SERVER, tickets.count(server, us));
        assertNull(tickets.take(server, them), "a ticket issued to another key");
        assertEquals(ClientTickets.PER_SERVER + 2, tickets.take(server, us).ticket()[0], "the newest first");
        tickets.forget(server, us);
        assertNull(tickets.take(server, us));
    }
}
