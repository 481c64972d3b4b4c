package org.aldeia.deck;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * This user's DECK shared segments, as DECK's sci transport keeps them (native-c/deck/seg_shm.c,
 * the layout's one description): files of {@code /dev/shm/deck-<uid>} (mode 0700), each
 * starting with an owner record {magic u64 "DECKSEG1", available u32, pid i32, ...} in the
 * machine's byte order. For diagnostics and for the tests that check that a process leaves none
 * behind; this class only reads.
 */
public final class DeckSegments {

    private static final long SEGMENT_MAGIC = 0x4445434b53454731L;   // "DECKSEG1"
    private static final int RECORD_PREFIX = 16;
    private static final int PID_OFFSET = 12;

    /** One segment: its file and the pid of the process that created it (-1 when it has no record). */
    public record Segment(Path file, long ownerPid) {
    }

    private DeckSegments() {
    }

    /** This user's segment directory, /dev/shm/deck-uid (it may not exist yet). */
    public static Path directory() throws IOException {
        return Path.of("/dev/shm", "deck-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    }

    /** Every segment in {@link #directory()} now (none when it does not exist). */
    public static List<Segment> all() throws IOException {
        Path directory = directory();
        List<Segment> segments = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return segments;
        }
        try (Stream<Path> entries = Files.list(directory)) {
            for (Path file : (Iterable<Path>) entries::iterator) {
                long owner = ownerPid(file);
                if (owner != -2) {
                    segments.add(new Segment(file, owner));
                }
            }
        }
        return segments;
    }

    /** The segments process {@code pid} created and has not removed. */
    public static List<Segment> ownedBy(long pid) throws IOException {
        return all().stream().filter(s -> s.ownerPid() == pid).toList();
    }

    /** The pid in a segment's owner record; -1 when it has none (yet); -2 when the file is gone. */
    private static long ownerPid(Path segment) throws IOException {
        ByteBuffer record = ByteBuffer.allocate(RECORD_PREFIX).order(ByteOrder.nativeOrder());
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ)) {
            channel.read(record);   // tmpfs reads are short only at the end of the file
        } catch (NoSuchFileException unlinkedMeanwhile) {
            return -2;
        }
        if (record.hasRemaining() || record.getLong(0) != SEGMENT_MAGIC) {
            return -1;
        }
        return record.getInt(PID_OFFSET);
    }
}
