/**
 * Aldeia's sockets for java.net programs. Exported: the sockets, streams and factories
 * ({@code org.aldeia.core}), the configuration and its socket rules ({@code .config}), and the
 * SPI that transport providers implement ({@code .spi}). The bootstrap, the plain TCP channel
 * and the TCP-first upgrade ({@code .bootstrap}, {@code .plain}, {@code .upgrade}) are this
 * module's own: their public members serve its other packages, not applications.
 *
 * <p>On the class path, where most programs and the -javaagent put Aldeia, no package is
 * hidden; this declaration is what a program on the module path sees.
 */
module org.aldeia.core {
    requires transitive java.rmi;
    requires org.slf4j;

    exports org.aldeia.core;
    exports org.aldeia.core.config;
    exports org.aldeia.core.spi;

    uses org.aldeia.core.spi.TransportProvider;
}
