package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.AldeiaConfigurationException;
import org.aldeia.core.config.ConfigurationFixtures;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class AldeiaEnvironmentTest {

    /** A provider that records how often it was opened and can refuse to open. */
    static final class FakeProvider implements TransportProvider {
        final String type;
        final boolean available;
        final IOException openFailure;
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        volatile AldeiaConfiguration askedWith;   // what isAvailable was given

        FakeProvider(String type, boolean available, IOException openFailure) {
            this.type = type;
            this.available = available;
            this.openFailure = openFailure;
        }

        @Override
        public String socketType() {
            return type;
        }

        @Override
        public boolean isAvailable(AldeiaConfiguration configuration) {
            askedWith = configuration;
            return available;
        }

        @Override
        public String whyUnavailable(AldeiaConfiguration configuration) {
            return isAvailable(configuration) ? "" : "libfake.so: cannot open shared object file";
        }

        @Override
        public Transport open(AldeiaConfiguration configuration) throws IOException {
            opened.incrementAndGet();
            if (openFailure != null) {
                throw openFailure;
            }
            return new Transport() {
                @Override
                public String description() {
                    return "fake " + type + ", mtu " + configuration.mtu();
                }

                @Override
                public String route() {
                    return type;
                }

                @Override
                public Endpoint createEndpoint(int socketId, EndpointSizes sizes) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public byte[] publicKey() {
                    throw new UnsupportedOperationException();
                }

                @Override
                public byte[] identity() {
                    throw new UnsupportedOperationException();
                }

                @Override
                public byte[] identityOf(byte[] remoteInfo) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public byte[] pairKey(byte[] remoteIdentity, byte[] peerPublicKey) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                }
            };
        }
    }

    private final ListAppender<ILoggingEvent> log = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(AldeiaEnvironment.class);

    @BeforeEach
    void captureLog() {
        log.start();
        logger.addAppender(log);
    }

    @AfterEach
    void releaseLog() {
        logger.detachAppender(log);
    }

    private static AldeiaEnvironment environment(AldeiaConfiguration configuration, TransportProvider... providers) {
        return new AldeiaEnvironment(() -> configuration, () -> List.of(providers), false);
    }

    private List<String> infoLines() {
        return log.list.stream().filter(e -> e.getLevel() == Level.INFO).map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void automaticChoiceFallsBackToDeckWhenVapiIsUnavailableAndSaysSoOnce() throws IOException {
        FakeProvider vapi = new FakeProvider("SOCKET_VAPI", false, null);
        FakeProvider deck = new FakeProvider("SOCKET_DECK", true, null);
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults(), vapi, deck);

        Transport first = env.transport();
        assertSame(first, env.transport());
        assertEquals("fake SOCKET_DECK, mtu 65536", first.description());
        assertEquals(0, vapi.opened.get());
        assertEquals(1, deck.opened.get());
        assertEquals(List.of("Aldeia: using fake SOCKET_DECK, mtu 65536 (no configuration file; SOCKET_VAPI cannot run "
                + "here: libfake.so: cannot open shared object file)"),
                infoLines());
    }

    @Test
    void anAvailableVapiServesOtherHostsAndDeckThisOne() throws IOException {
        FakeProvider vapi = new FakeProvider("SOCKET_VAPI", true, null);
        FakeProvider deck = new FakeProvider("SOCKET_DECK", true, null);
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults(), deck, vapi);
        assertEquals("fake SOCKET_VAPI, mtu 65536", env.transport().description());
        assertEquals(2, env.routes().names().size(), env.routes().names().toString());
        assertEquals(1, deck.opened.get());
        assertTrue(infoLines().get(0).contains("chosen automatically per peer: SOCKET_VAPI can run here"),
                infoLines().toString());
        assertTrue(infoLines().get(0).contains("fake SOCKET_DECK, mtu 65536 to this host's peers and the rest"),
                infoLines().toString());
    }

    @Test
    void anAvailableVapiAloneWhenDeckCannotRun() throws IOException {
        FakeProvider vapi = new FakeProvider("SOCKET_VAPI", true, null);
        FakeProvider deck = new FakeProvider("SOCKET_DECK", false, null);
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults(), deck, vapi);
        assertEquals(List.of("SOCKET_VAPI"), env.routes().names());
        assertEquals(0, deck.opened.get());
    }

    @Test
    void theAutomaticChoiceAsksWithTheConfigurationSoThatAConfiguredAdapterCounts() throws IOException {
        FakeProvider vapi = new FakeProvider("SOCKET_VAPI", false, null);
        AldeiaConfiguration config = ConfigurationFixtures.configuration("test", Map.of(ConfigurationKey.MTU, 2048));
        environment(config, vapi, new FakeProvider("SOCKET_DECK", true, null)).transport();
        assertSame(config, vapi.askedWith);
    }

    @Test
    void automaticChoiceWithoutVapiProviderSaysSo() throws IOException {
        environment(AldeiaConfiguration.defaults(), new FakeProvider("SOCKET_DECK", true, null)).transport();
        assertTrue(infoLines().get(0).contains("no SOCKET_VAPI provider on the class path"), infoLines().toString());
    }

    @Test
    void explicitSocketTypeIsUsedEvenWhenAnotherIsAvailable() throws IOException {
        FakeProvider vapi = new FakeProvider("SOCKET_VAPI", true, null);
        FakeProvider deck = new FakeProvider("SOCKET_DECK", true, null);
        AldeiaConfiguration config = TestEnvironments.configuration("SOCKET_DECK");
        assertEquals("fake SOCKET_DECK, mtu " + TestEnvironments.MTU, environment(config, vapi, deck).transport()
                .description());
        assertTrue(infoLines().get(0).contains("configuration test; socket_type SOCKET_DECK configured"),
                infoLines().toString());
    }

    @Test
    void explicitSocketTypeWithoutProviderNamesItAndTheProvidersFound() {
        AldeiaEnvironment env = environment(TestEnvironments.configuration("SOCKET_VAPI"),
                new FakeProvider("SOCKET_DECK", true, null), new FakeProvider("SOCKET_TEST", true, null));
        IOException e = assertThrows(IOException.class, env::transport);
        assertTrue(e.getMessage().contains("socket_type SOCKET_VAPI")
                && e.getMessage().contains("providers found: SOCKET_DECK, SOCKET_TEST"), e.getMessage());
    }

    @Test
    void noProviderAtAllIsExplained() {
        IOException e = assertThrows(IOException.class, environment(AldeiaConfiguration.defaults())::transport);
        assertTrue(e.getMessage().contains("no SOCKET_DECK provider") && e.getMessage().contains("providers found: none"),
                e.getMessage());
    }

    @Test
    void failedStartIsNotRetriedAndEveryCallerGetsTheSameCause() {
        IOException missing = new IOException("libmicrovapi.so (needed for socket_type = SOCKET_DECK) could not be loaded");
        FakeProvider deck = new FakeProvider("SOCKET_DECK", true, missing);
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults(), deck);

        assertSame(missing, assertThrows(IOException.class, env::transport));
        IOException later = assertThrows(IOException.class, env::transport);
        assertSame(missing, later.getCause());
        assertTrue(later.getMessage().contains("libmicrovapi.so"), later.getMessage());
        assertEquals(1, deck.opened.get());
    }

    @Test
    void configurationErrorReachesTheFirstSocketUnchanged() {
        AldeiaConfigurationException bad = ConfigurationFixtures.error("aldeia.conf", 3, "mtu", "'abc' is not a number");
        AldeiaEnvironment env = new AldeiaEnvironment(() -> {
            throw bad;
        }, List::of, false);
        AldeiaSocket socket = new AldeiaSocket(env);
        assertSame(bad, assertThrows(AldeiaConfigurationException.class,
                () -> socket.connect(new java.net.InetSocketAddress("127.0.0.1", 9))));
        assertTrue(socket.isClosed());
    }

    @Test
    void socketIdsAreSerialFromZero() {
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults());
        assertEquals(0, new AldeiaSocket(env).id());
        assertEquals(1, new AldeiaSocket(env).id());
        assertEquals(2, new AldeiaSocket(env).id());
    }

    @Test
    void serviceLoaderFindsInstalledProviders() {
        assertTrue(AldeiaEnvironment.installedProviders().stream()
                .anyMatch(p -> p.socketType().equals(InMemoryTransportProvider.SOCKET_TYPE)));
    }

    @Test
    void globalEnvironmentReadsThePropertyAndServiceLoader(@org.junit.jupiter.api.io.TempDir Path dir)
            throws IOException {
        Path file = dir.resolve("aldeia.conf");
        java.nio.file.Files.writeString(file, "socket_type = SOCKET_TEST\nmtu = 512\n");
        String saved = System.getProperty(AldeiaConfiguration.PROPERTY);
        System.setProperty(AldeiaConfiguration.PROPERTY, file.toString());
        AldeiaEnvironment.replaceGlobal(null);
        try {
            AldeiaEnvironment global = AldeiaEnvironment.global();
            assertSame(global, AldeiaEnvironment.global());
            assertTrue(global.transport().description().matches("in-memory test transport \\d+, mtu 512"),
                    global.transport().description());
            assertEquals(file.toString(), global.configuration().source());
            assertTrue(infoLines().get(0).contains("configuration " + file), infoLines().toString());
        } finally {
            AldeiaEnvironment.replaceGlobal(null);
            if (saved == null) {
                System.clearProperty(AldeiaConfiguration.PROPERTY);
            } else {
                System.setProperty(AldeiaConfiguration.PROPERTY, saved);
            }
        }
    }

    @Test
    void closeClosesTheTransportOnceAndRefusesLaterUse() throws IOException {
        FakeProvider deck = new FakeProvider("SOCKET_DECK", true, null);
        AldeiaEnvironment env = environment(AldeiaConfiguration.defaults(), deck);
        env.transport();
        env.close();
        env.close();
        assertEquals(1, deck.closed.get());
        assertThrows(IOException.class, env::transport);
    }
}
