package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsChartTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    void writesAReadablePngOfTheChartsSizeWithEveryTransportDrawn(@TempDir Path dir) throws Exception {
        List<Row> rows = List.of(
                Fixtures.row(Transport.JDK_LOOPBACK, Placement.FREE, 20.0, 2000.0),
                Fixtures.row(Transport.JDK_LOOPBACK, Placement.PINNED, 10.0, 1000.0),
                Fixtures.row(Transport.AERON_IPC, Placement.PINNED, 5.0, 3000.0),
                Fixtures.failed(Transport.ALDEIA_STATIC_SCI, "not there"));
        Path png = dir.resolve("chart.png");
        ResultsChart.write(rows, BenchClient.SIZES, png);

        assertTrue(Files.size(png) > 0);
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "ImageIO cannot read the file back as an image");
        assertEquals(ResultsChart.WIDTH, image.getWidth());
        assertEquals(ResultsChart.HEIGHT, image.getHeight());
        // Each transport with figures has pixels of its colour (its line, points and legend).
        assertTrue(countPixels(image, Transport.JDK_LOOPBACK) > 100, "JDK loopback's line is missing");
        assertTrue(countPixels(image, Transport.AERON_IPC) > 100, "Aeron's line is missing");
    }

    @Test
    void eachMedianHasABarUpToItsP99() {
        Row tight = Fixtures.row(Transport.AERON_IPC, Placement.FREE, 5.0, 3000.0);
        // The same medians with a p99 fifty times above each: only the bars differ.
        Row tailed = new Row(tight.name(), tight.label(), tight.order(), tight.placement(), tight.cells().stream()
                .map(c -> new Cell(c.metric(), c.sizeBytes(), c.runs(), c.mean(), c.median(), 50 * c.median(),
                        50 * c.median())).toList(), null);
        // A baseline row fixes the vertical axis of both charts to the same decades.
        Row axis = Fixtures.row(Transport.JDK_LOOPBACK, Placement.FREE, 1000.0, 2000.0);
        int withoutBars = countPixels(ResultsChart.render(List.of(axis, tight), BenchClient.SIZES), Transport.AERON_IPC);
        int withBars = countPixels(ResultsChart.render(List.of(axis, tailed), BenchClient.SIZES), Transport.AERON_IPC);
        assertTrue(withBars > withoutBars + 100, withoutBars + " pixels without tails, " + withBars + " with");
    }

    private static int countPixels(BufferedImage image, Transport transport) {
        int rgb = ResultsChart.colourOf(transport.ordinal()).getRGB() & 0xffffff;
        int n = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                if ((image.getRGB(x, y) & 0xffffff) == rgb) {
                    n++;
                }
            }
        }
        return n;
    }
}
