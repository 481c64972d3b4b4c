package org.aldeia.samples.rmi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** The sample's pieces that need no second JVM: the command line, the service and the client's check. */
class RmiDemoTest {

    @Test
    void badCommandLinesExitWithTheUsageStatusAndPrintNothing() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        assertEquals(2, RmiDemo.run(new String[] {}, print));
        assertEquals(2, RmiDemo.run(new String[] {"server"}, print), "--port is required");
        assertEquals(2, RmiDemo.run(new String[] {"server", "--port", "0"}, print));
        assertEquals(2, RmiDemo.run(new String[] {"client", "--port", "1099", "--ints"}, print));
        assertEquals(2, RmiDemo.run(new String[] {"client", "--prot", "1099"}, print));
        assertEquals(2, RmiDemo.run(new String[] {"client", "--port", "many"}, print));
        assertEquals(0, out.size());
    }

    @Test
    void theServiceReversesAndTheClientAcceptsOnlyTheReversal() throws IOException {
        int[] sent = RmiClient.values(1000, 2);
        int[] reply = new ReverserService().reverse(sent.clone());
        assertEquals(sent[0], reply[999]);
        assertEquals(sent[999], reply[0]);
        RmiClient.check(2, sent, reply);

        assertNotEquals(sent[5], RmiClient.values(1000, 3)[5], "every call sends other values");
        int[] corrupted = reply.clone();
        corrupted[640]++;
        IOException e = assertThrows(IOException.class, () -> RmiClient.check(2, sent, corrupted));
        assertTrue(e.getMessage().contains("call 2: element 640 of the reply"), e.getMessage());
        assertThrows(IOException.class, () -> RmiClient.check(2, sent, new int[999]));
        assertArrayEquals(sent, new ReverserService().reverse(reply));
    }
}
