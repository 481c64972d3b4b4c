package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** A fabric that never leaves its host names the host in its route; one between hosts does not. */
class FabricRouteTest {

    @Test
    void fabricsBetweenHostsAreNamedAlikeOnEveryHost() {
        assertEquals("fabric verbs;IB-0xfe80::", FabricRoute.of("verbs;IB-0xfe80::", "host-a"));
        assertEquals(FabricRoute.of("tcp;ofi_rxm;198.18.0.0/24", "host-a"),
                FabricRoute.of("tcp;ofi_rxm;198.18.0.0/24", "host-b"));
    }

    @Test
    void shmAndLoopbackNameTheirHost() {
        assertEquals("fabric shm;shm on host host-a", FabricRoute.of("shm;shm", "host-a"));
        assertNotEquals(FabricRoute.of("tcp;ofi_rxm;127.0.0.1/32", "host-a"),
                FabricRoute.of("tcp;ofi_rxm;127.0.0.1/32", "host-b"));
        assertNotEquals(FabricRoute.of("tcp;ofi_rxm;::1/128", "host-a"), FabricRoute.of("tcp;ofi_rxm;::1/128", "host-b"));
    }

    @Test
    void thisHostHasAName() {
        assertFalse(FabricRoute.thisHost().isBlank());
    }
}
