package org.aldeia.vapi;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The route name of a queue pair library on a fabric ({@link org.aldeia.core.spi.Transport#route}):
 * "fabric " and libfabric's "provider;fabric name". Two processes that name the same route are
 * taken to reach each other through it, which holds for a fabric between hosts (an InfiniBand
 * subnet, a tcp subnet) but not for one that never leaves its host: libfabric's shm, and tcp on
 * a loopback address, have the same name on every host. Their routes therefore also name the
 * host (its boot id), so that a peer on another host is not offered a fabric it cannot reach.
 */
final class FabricRoute {

    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private FabricRoute() {
    }

    /** The route of {@code fabric} ("provider;fabric name"), on the host named {@code host}. */
    static String of(String fabric, String host) {
        return "fabric " + fabric + (hostLocal(fabric) ? " on host " + host : "");
    }

    /** shm, or tcp (or any provider) whose fabric is a loopback network. */
    static boolean hostLocal(String fabric) {
        String network = fabric.substring(fabric.lastIndexOf(';') + 1);
        return fabric.startsWith("shm") || network.startsWith("127.") || network.startsWith("::1/");
    }

    /** This host: its boot id, or its name where /proc does not say. */
    static String thisHost() {
        try {
            return Files.readString(BOOT_ID).strip();
        } catch (IOException | RuntimeException e) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (IOException unknown) {
                return "unknown";
            }
        }
    }
}
