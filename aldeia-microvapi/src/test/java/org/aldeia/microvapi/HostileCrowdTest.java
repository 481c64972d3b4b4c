package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.HostileClients.Kind;
import org.aldeia.microvapi.PeerMain.Command;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 9's target: with 1000 hostile connections at once at an Aldeia server socket (silent,
 * trickling, garbage, truncated handshakes, HTTP requests; from 20 addresses, each one replaced
 * a second after the server closes it, so the pressure stays on), a legitimate client's connect
 * takes at most twice as long as against the idle server (medians of {@link #CONNECTS}), and the
 * server's threads, descriptors and segments return to their baseline when the crowd goes.
 */
@Timeout(value = 180, threadMode = ThreadMode.SEPARATE_THREAD)
class HostileCrowdTest {

    private static final Logger LOG = LoggerFactory.getLogger(HostileCrowdTest.class);
    private static final int CONNECTS = 41;
    private static final long PAUSE_MILLIS = 60;
    private static final int ADDRESSES = 20;
    private static final int PER_KIND_AND_ADDRESS = 10;   // 5 kinds x 20 addresses x 10 = 1000

    @Test
    void aThousandHostileConnectionsDoNotSlowALegitimateConnectMoreThanTwice() throws Exception {
        try (ChildJvm server = ChildJvm.start(List.of(), PeerMain.class)) {
            int port = Integer.parseInt(server.awaitLine("PORT "));
            connectTimes(port, 20); // warm-up: classes, JIT, the DECK peers meet
            ProcessResources before = ProcessResources.settled(server.pid(), null, 20_000);
            long[] idle = connectTimes(port, CONNECTS);

            long[] crowded;
            ProcessResources during;
            int opened, open;
            try (HostileClients crowd = new HostileClients(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), true)) {
                List<Kind> kinds = List.of(new Kind("silent", HostilePayloads::nothing, false),
                        new Kind("trickling", () -> HostilePayloads.hello(ThreadLocalRandom.current().nextInt(), "tcp"), true),
                        new Kind("garbage", HostilePayloads::garbage, false),
                        new Kind("truncated hello", HostilePayloads::truncatedHello, false),
                        new Kind("http", HostilePayloads::httpGet, false));
                for (int a = 0; a < ADDRESSES; a++) {
                    InetAddress from = InetAddress.getByName("127.0.0." + (2 + a));
                    for (Kind kind : kinds) {
                        crowd.open(kind, PER_KIND_AND_ADDRESS, from);
                    }
                }
                opened = crowd.opened();
                TimeUnit.MILLISECONDS.sleep(100); // the crowd is at the server
                open = crowd.open(); // the garbage and HTTP ones are closed at once, and come back a second later
                ProcessResources.Peak peak = new ProcessResources.Peak(server.pid());
                crowded = connectTimes(port, CONNECTS);
                during = peak.stop();
                LOG.info("hostile crowd: {} opened in all, {} closed by the server, {} open at the end", crowd.opened(),
                        crowd.closedByServer(), crowd.open());
            }
            ProcessResources after = ProcessResources.settled(server.pid(), before, 20_000);

            double idleMedian = median(idle), crowdedMedian = median(crowded);
            LOG.info("connect against the idle server: median {} ms, p99 {} ms; with {} hostile connections opened at once"
                    + " ({} open as the connects began): median {} ms, p99 {} ms (ratio {}); server {} before, {} during"
                    + " (peak), {} after", ms(idleMedian), ms(p99(idle)), opened, open,
                    ms(crowdedMedian), ms(p99(crowded)), String.format("%.2f", crowdedMedian / idleMedian), before, during,
                    after);
            assertEquals(ADDRESSES * PER_KIND_AND_ADDRESS * 5, opened);
            assertTrue(crowdedMedian <= 2 * idleMedian, "a legitimate connect took " + ms(crowdedMedian)
                    + " ms among the hostile crowd, " + ms(idleMedian) + " ms against the idle server");
            assertEquals(before.threads(), after.threads(), before + " / " + after);
            assertEquals(before.descriptors(), after.descriptors(), before + " / " + after);
            assertEquals(before.segments(), after.segments(), before + " / " + after);
        }
    }

    /**
     * How long each of {@code count} connects took, in nanoseconds; each connection then does an
     * empty exchange, and the next one starts {@link #PAUSE_MILLIS} later, so the measures spread
     * over the crowd's first seconds (its arrival, the deadlines, the garbage coming back).
     */
    private static long[] connectTimes(int port, int count) throws IOException, InterruptedException {
        long[] times = new long[count];
        for (int i = 0; i < count; i++) {
            TimeUnit.MILLISECONDS.sleep(PAUSE_MILLIS);
            long start = System.nanoTime();
            try (AldeiaSocket socket = new AldeiaSocket(InetAddress.getLoopbackAddress(), port)) {
                times[i] = System.nanoTime() - start;
                DataOutputStream header = new DataOutputStream(socket.getOutputStream());
                header.writeUTF(Command.VERIFY_UNTIL_END.name());
                header.writeLong(i);
                header.writeLong(0);
                header.flush();
                socket.shutdownOutput();
                assertEquals(0, new DataInputStream(socket.getInputStream()).readLong());
            }
        }
        return times;
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static double p99(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[(int) Math.ceil(0.99 * sorted.length) - 1];
    }

    private static String ms(double nanos) {
        return String.format("%.2f", nanos / 1e6);
    }
}
