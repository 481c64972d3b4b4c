package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fuzzer in JUnit: replays a target's committed inputs (resource directory
 * {@code fuzz/<target>/}, listed in its {@code index}: the seeds, written by
 * src/test/fuzz/make_seeds.py, and under "# regressions" every input that once failed), then
 * feeds it mutations of them ({@link ByteMutator})
 * until the time budget is spent. The budget is the system property {@code aldeia.fuzz.seconds}
 * (the build passes the Maven property {@code fuzz.seconds}, 60 by default; 0 replays only).
 * The run's seed is logged, and {@code aldeia.fuzz.seed} repeats a run.
 *
 * <p>An input the target fails on is written to {@code target/fuzz-failures/<target>/} and the
 * test fails naming the file: add it to the target's resource directory and to its index under
 * "# regressions" before fixing what it found.
 */
final class SeededFuzzer {

    private static final Logger LOG = LoggerFactory.getLogger(SeededFuzzer.class);
    private static final int MAX_INPUT = 10_000;

    /** What is fuzzed: throws (anything) when the input makes it misbehave. */
    @FunctionalInterface
    interface Target {
        void run(byte[] input) throws Exception;
    }

    private final String name;
    private final List<byte[]> corpus;

    /** @param name the target's resource directory under fuzz/ */
    SeededFuzzer(String name) throws IOException {
        this.name = name;
        this.corpus = load(name);
    }

    /** Replays the committed inputs, then mutates them for the budget; returns how many inputs ran. */
    long run(Target target) throws IOException {
        for (byte[] input : corpus) {
            runOne(target, input);
        }
        long seconds = Long.getLong("aldeia.fuzz.seconds", 60);
        long seed = Long.getLong("aldeia.fuzz.seed", System.nanoTime());
        ByteMutator mutator = new ByteMutator(seed, MAX_INPUT);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds), runs = corpus.size();
        for (; System.nanoTime() - end < 0; runs++) {
            runOne(target, mutator.mutate(corpus.get(mutator.nextInt(corpus.size())), corpus));
        }
        LOG.info("fuzz target {}: {} committed inputs, {} runs in {} s (seed {}, -Daldeia.fuzz.seed={} repeats it)",
                name, corpus.size(), runs, seconds, seed, seed);
        return runs;
    }

    private void runOne(Target target, byte[] input) throws IOException {
        try {
            target.run(input);
        } catch (Throwable failure) {
            Path saved = save(input);
            throw new AssertionError("fuzz target " + name + " failed on the input saved as " + saved + " ("
                    + HexFormat.of().formatHex(input, 0, Math.min(input.length, 96)) + (input.length > 96 ? "..." : "")
                    + "): add it to src/test/resources/fuzz/" + name + "/ and to its index under '# regressions'", failure);
        }
    }

    private Path save(byte[] input) throws IOException {
        Path dir = Path.of("target", "fuzz-failures", name);
        Files.createDirectories(dir);
        Path file = dir.resolve(sha1(input) + ".bin");
        Files.write(file, input);
        return file.toAbsolutePath();
    }

    private static String sha1(byte[] input) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(input));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The inputs named in fuzz/<name>/index, one file name per line (# starts a comment). */
    private static List<byte[]> load(String name) throws IOException {
        String dir = "/fuzz/" + name + "/";
        List<byte[]> inputs = new ArrayList<>();
        for (String line : read(dir + "index").split("\n")) {
            String file = line.replaceFirst("#.*", "").trim();
            if (!file.isEmpty()) {
                inputs.add(bytes(dir + file));
            }
        }
        if (inputs.isEmpty()) {
            throw new IOException("fuzz target " + name + " has no committed inputs in " + dir + "index");
        }
        return inputs;
    }

    private static String read(String resource) throws IOException {
        return new String(bytes(resource), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String resource) throws IOException {
        try (InputStream in = SeededFuzzer.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no test resource " + resource);
            }
            return in.readAllBytes();
        }
    }
}
