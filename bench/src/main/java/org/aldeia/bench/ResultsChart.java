package org.aldeia.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

import javax.imageio.ImageIO;

import org.aldeia.bench.Measurement.Metric;

/**
 * The PNG chart, drawn with plain Java2D: left, median one-way latency (µs) against message
 * size, with a bar up to each point's p99; right, ping-pong throughput (size / median one-way
 * time, MB/s) against size, with each row's streaming bandwidth as diamonds at its write sizes.
 * Both axes logarithmic; one colour per transport or tool, solid lines free, dashed pinned.
 */
final class ResultsChart {

    static final int WIDTH = 1400;
    static final int HEIGHT = 760;

    private static final Color[] COLOURS = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
        new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b),
        new Color(0xe377c2), new Color(0x17becf),
    };
    private static final int MARGIN_LEFT = 80;
    private static final int MARGIN_TOP = 50;
    private static final int MARGIN_BOTTOM = 260;
    private static final int PANEL_GAP = 110;

    private ResultsChart() {
    }

    static void write(List<Row> rows, List<Integer> sizes, Path file) throws IOException {
        if (!ImageIO.write(render(rows, sizes), "png", file.toFile())) {
            throw new IOException("no PNG writer in this JDK's ImageIO; cannot write " + file);
        }
    }

    static BufferedImage render(List<Row> rows, List<Integer> sizes) {
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            int panelWidth = (WIDTH - MARGIN_LEFT - PANEL_GAP - 30) / 2;
            int panelHeight = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
            List<Double> latencies = values(rows, sizes, Cell::value, false);
            latencies.addAll(values(rows, sizes, Cell::p99, false));
            Panel latency = new Panel(MARGIN_LEFT, MARGIN_TOP, panelWidth, panelHeight,
                    "One-way latency: median, bar to p99 (ping-pong)", "µs", sizes, latencies);
            Panel bandwidth = new Panel(MARGIN_LEFT + panelWidth + PANEL_GAP, MARGIN_TOP, panelWidth, panelHeight,
                    "Throughput (size / median one-way time; ◇ = streaming)", "MB/s", sizes,
                    values(rows, sizes, ResultsChart::megabytesPerSecond, true));
            latency.drawFrame(g);
            bandwidth.drawFrame(g);
            List<String> legend = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                Row row = rows.get(i);
                Color colour = colourOf(row.order());
                // Rows' bars at one size would cover each other: each row's a few pixels aside.
                int barOffset = (i % 9 - 4) * 3;
                boolean dashed = row.placement() != Placement.FREE;
                latency.drawSeries(g, colour, dashed, points(row, sizes, Cell::value));
                for (double[] bar : points(row, sizes, Cell::p99)) {
                    row.cell(Metric.LATENCY, (int) bar[0]).ifPresent(c -> latency.drawBar(g, colour, bar[0], barOffset,
                            c.value(), bar[1]));
                }
                bandwidth.drawSeries(g, colour, dashed, points(row, sizes, ResultsChart::megabytesPerSecond));
                row.cells().stream().filter(c -> c.metric() == Metric.BANDWIDTH)
                        .forEach(c -> bandwidth.drawDiamond(g, colour, c.sizeBytes(), c.value()));
                if (!legend.contains(row.name())) {
                    drawLegendEntry(g, colour, row, legend.size());
                    legend.add(row.name());
                }
            }
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            g.drawString("solid: free placement; dashed: pinned (server core 0, client core 1), on one host or on two"
                    + " emulated hosts (see the table); each point the median of the runs",
                    MARGIN_LEFT, HEIGHT - 14);
        } finally {
            g.dispose();
        }
        return image;
    }

    /** Each transport or tool keeps its colour whichever rows a run draws (see {@link Row#order()}). */
    static Color colourOf(int order) {
        return COLOURS[order % COLOURS.length];
    }

    /** A ping-pong cell's throughput: size over the median one-way time, MB/s. */
    private static double megabytesPerSecond(Cell cell) {
        return cell.sizeBytes() / cell.value();
    }

    private static void drawLegendEntry(Graphics2D g, Color colour, Row row, int index) {
        int x = MARGIN_LEFT + (index % 3) * 420;
        int y = HEIGHT - MARGIN_BOTTOM + 80 + (index / 3) * 24;
        g.setColor(colour);
        g.setStroke(new BasicStroke(3f));
        g.drawLine(x, y - 5, x + 30, y - 5);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        String text = row.label() + (row.cells().isEmpty() ? " (n/a)" : "");
        g.drawString(text, x + 38, y);
    }

    /** (size, value) pairs of the ping-pong cells this row has (a value the cell lacks, NaN, is left out). */
    private static List<double[]> points(Row row, List<Integer> sizes, ToDoubleFunction<Cell> value) {
        List<double[]> points = new ArrayList<>();
        for (int size : sizes) {
            row.cell(Metric.LATENCY, size).map(value::applyAsDouble).filter(v -> v > 0 && !v.isInfinite())
                    .ifPresent(v -> points.add(new double[] {size, v}));
        }
        return points;
    }

    /** Every positive value a panel shows, to fit its vertical axis. */
    private static List<Double> values(List<Row> rows, List<Integer> sizes,
            ToDoubleFunction<Cell> value, boolean withStreaming) {
        List<Double> values = new ArrayList<>();
        for (Row row : rows) {
            points(row, sizes, value).forEach(p -> values.add(p[1]));
            if (withStreaming) {
                row.cells().stream().filter(c -> c.metric() == Metric.BANDWIDTH).forEach(c -> values.add(c.value()));
            }
        }
        values.removeIf(v -> !(v > 0) || v.isInfinite());
        return values;
    }

    /** One log-log plot area: x from the smallest to the largest size, y over whole decades. */
    private static final class Panel {
        private final int left;
        private final int top;
        private final int width;
        private final int height;
        private final String title;
        private final String unit;
        private final double minX;
        private final double maxX;
        private final double minY;
        private final double maxY;

        Panel(int left, int top, int width, int height, String title, String unit, List<Integer> sizes,
                List<Double> values) {
            this.left = left;
            this.top = top;
            this.width = width;
            this.height = height;
            this.title = title;
            this.unit = unit;
            this.minX = Math.log10(Math.max(1, sizes.stream().mapToInt(Integer::intValue).min().orElse(1)));
            this.maxX = Math.max(minX + 1, Math.log10(sizes.stream().mapToInt(Integer::intValue).max().orElse(10)));
            double low = values.stream().mapToDouble(Math::log10).min().orElse(0);
            double high = values.stream().mapToDouble(Math::log10).max().orElse(1);
            this.minY = Math.floor(low);
            this.maxY = Math.max(minY + 1, Math.ceil(high));
        }

        int x(double size) {
            return left + (int) Math.round((Math.log10(size) - minX) / (maxX - minX) * width);
        }

        int y(double value) {
            return top + height - (int) Math.round((Math.log10(value) - minY) / (maxY - minY) * height);
        }

        void drawFrame(Graphics2D g) {
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.setStroke(new BasicStroke(1f));
            for (int decade = (int) minY; decade <= (int) maxY; decade++) {
                int y = y(Math.pow(10, decade));
                g.setColor(new Color(0xdddddd));
                g.drawLine(left, y, left + width, y);
                g.setColor(Color.BLACK);
                String label = decade >= 0 ? String.format("%.0f", Math.pow(10, decade)) : String.valueOf(Math.pow(10, decade));
                g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
            }
            for (int power = 0; Math.log10(Math.pow(2, power)) <= maxX + 1e-9; power += 2) {
                double size = Math.pow(2, power);
                if (Math.log10(size) < minX - 1e-9) {
                    continue;
                }
                int x = x(size);
                g.setColor(new Color(0xeeeeee));
                g.drawLine(x, top, x, top + height);
                g.setColor(Color.BLACK);
                String label = Sizes.label((long) size).replace(" ", "");
                g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, top + height + 18);
            }
            g.setColor(Color.BLACK);
            g.drawRect(left, top, width, height);
            g.drawString("message size (bytes, log)", left + width / 2 - 70, top + height + 38);
            g.drawString(unit + " (log)", left - 70, top - 10);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, left + 10, top - 18);
        }

        void drawSeries(Graphics2D g, Color colour, boolean dashed, List<double[]> points) {
            g.setColor(colour);
            g.setStroke(dashed ? new BasicStroke(2.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
                    new float[] {9f, 6f}, 0f) : new BasicStroke(2.5f));
            Path2D.Double line = new Path2D.Double();
            for (double[] p : points) {
                if (line.getCurrentPoint() == null) {
                    line.moveTo(x(p[0]), y(p[1]));
                } else {
                    line.lineTo(x(p[0]), y(p[1]));
                }
                g.fillOval(x(p[0]) - 4, y(p[1]) - 4, 8, 8);
            }
            g.draw(line);
        }

        /** A vertical bar from a median up to its p99, capped. */
        void drawBar(Graphics2D g, Color colour, double size, int offset, double median, double p99) {
            int x = x(size) + offset;
            g.setColor(colour);
            g.setStroke(new BasicStroke(1.5f));
            g.drawLine(x, y(median), x, y(p99));
            g.drawLine(x - 5, y(p99), x + 5, y(p99));
        }

        void drawDiamond(Graphics2D g, Color colour, double size, double value) {
            int x = x(size);
            int y = y(value);
            g.setColor(colour);
            g.setStroke(new BasicStroke(2f));
            g.drawPolygon(new int[] {x, x + 8, x, x - 8}, new int[] {y - 8, y, y + 8, y}, 4);
        }
    }
}
