package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchedulerNoteTest {

    @TempDir
    Path dir;

    @Test
    void aPackingKernelGetsANoteThatQuotesItsSetting() throws IOException {
        Path setting = Files.writeString(dir.resolve("sched_vcpu_pack"), "15\n");
        String note = SchedulerNote.describe(setting).orElseThrow();
        assertTrue(note.startsWith("kernel.sched_vcpu_pack = 15 (as read now): "), note);
        assertTrue(note.endsWith("\n"), "the note ends its own line");
    }

    @Test
    void noSettingOrZeroMeansNoNote() throws IOException {
        assertEquals(Optional.empty(), SchedulerNote.describe(dir.resolve("absent")));
        Path off = Files.writeString(dir.resolve("off"), "0\n");
        assertEquals(Optional.empty(), SchedulerNote.describe(off));
        Path empty = Files.writeString(dir.resolve("empty"), "");
        assertEquals(Optional.empty(), SchedulerNote.describe(empty));
    }
}
