package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;

import org.junit.jupiter.api.Test;

class ArgumentsTest {

    private static Arguments parse(String... args) {
        return Arguments.parse(args, Set.of("port", "impl", "iterations"), Set.of("csv"));
    }

    @Test
    void readsRoleOptionsAndFlags() {
        Arguments arguments = parse("client", "--port", "7000", "--impl", "ALDEIA", "--csv");
        assertEquals("client", arguments.role());
        assertEquals(7000, arguments.requiredInteger("port", 1));
        assertEquals(SocketKind.ALDEIA, arguments.kind());
        assertEquals(100, arguments.integer("iterations", 100, 1));
        assertTrue(arguments.flag("csv"));
    }

    @Test
    void rejectsWhatItDoesNotKnow() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("--prot", "1")).getMessage()
                .contains("--prot"));
        assertThrows(IllegalArgumentException.class, () -> parse("client", "extra"));
        assertThrows(IllegalArgumentException.class, () -> parse("--port"));
        assertThrows(IllegalArgumentException.class, () -> parse("--impl", "udp").kind());
        assertThrows(IllegalArgumentException.class, () -> parse().requiredInteger("port", 1));
        assertThrows(IllegalArgumentException.class, () -> parse("--port", "0").requiredInteger("port", 1));
        assertThrows(IllegalArgumentException.class, () -> parse("--iterations", "ten").integer("iterations", 1, 1));
    }
}
