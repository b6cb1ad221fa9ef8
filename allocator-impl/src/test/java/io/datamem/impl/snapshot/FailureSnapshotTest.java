package io.datamem.impl.snapshot;

import io.datamem.AllocationException;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.LimitExceededException;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.internal.snapshot.FailureSnapshots;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An allocation that fails through a handler carries a summary of the handler's memory naming its
 * largest consumers, and, with {@code -Ddatamem.snapshot.onFailure=DIR}, a snapshot file that reads
 * back.
 */
class FailureSnapshotTest {

    private static final String NAME = "pool(aligned64)+stats+tracking=full+limit=256k";

    private final List<NDArray> arrays = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        System.clearProperty(FailureSnapshots.ON_FAILURE_PROPERTY);
        System.clearProperty(FailureSnapshots.MAX_FILES_PROPERTY);
        System.clearProperty(FailureSnapshots.SUMMARY_PROPERTY);
        arrays.forEach(NDArray::close);
    }

    /** Ten tiles of 16 KiB: the largest consumer. */
    private List<NDArray> cacheTiles() {
        List<NDArray> tiles = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tiles.add(NDArray.zeros(DType.FLOAT64, 2048));
        }
        return tiles;
    }

    /** Four buffers of 8 KiB. */
    private List<NDArray> scratchBuffers() {
        List<NDArray> buffers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            buffers.add(NDArray.empty(DType.INT32, 2048));
        }
        return buffers;
    }

    @Test
    void aDeliberateOutOfMemoryUnderAPooledLimitNamesTheBiggestConsumersAndWritesASnapshot(@TempDir Path dir)
            throws IOException {
        System.setProperty(FailureSnapshots.ON_FAILURE_PROPERTY, dir.resolve("snapshots").toString());
        DataMemHandler h = DataMem.createHandler(NAME);
        arrays.addAll(DataMem.callWith(h, this::cacheTiles));        // 160 KiB
        arrays.addAll(DataMem.callWith(h, this::scratchBuffers));    // 32 KiB

        LimitExceededException e = assertThrows(LimitExceededException.class,
                () -> DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 16384)));   // 128 KiB more
        String message = e.getMessage();
        List<String> lines = message.lines().toList();
        assertEquals("handler '" + NAME + "' refused 131072 bytes: limit 262144 bytes, 196608 in use, 65536 left",
                lines.get(0), message);
        assertEquals("  handler '" + NAME + "': 196608 bytes live in 14 tracked blocks", lines.get(1), message);
        assertTrue(message.contains("\n  limit: 196608 of 262144 bytes in use, 1 request(s) refused\n"), message);
        assertTrue(message.contains("\n  statistics: 196608 bytes in use, peak 196608, 14 allocations, 0 frees,"
                + " 0 failures\n"), message);
        assertTrue(message.contains("\n  pool: ") && message.contains("largest free run"), message);
        int consumers = lines.indexOf("  largest consumers by allocation site:");
        assertTrue(consumers > 0, message);
        assertTrue(lines.get(consumers + 1).startsWith("    163840 bytes in 10 block(s) at ")
                && lines.get(consumers + 1).contains(".cacheTiles(FailureSnapshotTest.java:"), message);
        assertTrue(lines.get(consumers + 2).startsWith("    32768 bytes in 4 block(s) at ")
                && lines.get(consumers + 2).contains(".scratchBuffers(FailureSnapshotTest.java:"), message);
        assertTrue(e.summary().startsWith("  handler '" + NAME + "'"), e.summary());

        Path file = e.snapshotFile().orElseThrow();
        assertTrue(Files.isRegularFile(file), file.toString());
        assertEquals(dir.resolve("snapshots"), file.getParent());
        assertTrue(file.getFileName().toString().matches("datamem-snapshot-\\d+-\\d{8}T\\d{6}\\.\\d{3}Z-\\d+\\.json"),
                file.toString());
        assertEquals("  snapshot written to " + file, lines.getLast());

        MemorySnapshot s = MemorySnapshot.read(file);
        MemorySnapshot.Handler hs = s.handlers().getFirst();
        assertEquals(NAME, hs.name());
        assertEquals(List.of("limit", "tracking", "statistics", "pool", "other"),
                hs.layers().stream().map(LayerSnapshot::kind).toList());
        assertEquals(14, hs.blocks().size());
        LayerSnapshot.Site top = hs.layers(LayerSnapshot.Tracking.class).getFirst().sites().getFirst();
        assertEquals(163840, top.bytes());
        assertTrue(top.frame().contains("cacheTiles"), top.frame());
        LayerSnapshot.Pool pool = hs.layers(LayerSnapshot.Pool.class).getFirst();
        assertEquals(196608, pool.usedByteSize(), "16 KiB and 8 KiB are classes of their own");
        assertEquals(List.of(8192L, 16384L), pool.classes().stream().map(LayerSnapshot.SizeClass::byteSize).toList());
        assertEquals(1, hs.layers(LayerSnapshot.Limit.class).getFirst().refusals());
        assertEquals(message.lines().skip(1).limit(lines.size() - 2).toList(), s.summary().lines().toList(),
                "the message's summary is the file's");
    }

    @Test
    void aPoolWhoseUpstreamRunsOutNamesItsFreeRunsAndTheSites() {
        DataMemHandler h = DataMem.createHandler("pool(aligned64)+tracking=full");
        arrays.addAll(DataMem.callWith(h, this::scratchBuffers));
        OutOfNativeMemoryException e = assertThrows(OutOfNativeMemoryException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 1L << 50)));
        String message = e.getMessage();
        assertTrue(message.startsWith("handler 'pool(aligned64)+tracking=full' could not allocate 1125899906842624"
                + " bytes"), message);
        assertTrue(message.contains("\n  handler 'pool(aligned64)+tracking=full': 32768 bytes live in 4 tracked"
                + " blocks\n"), message);
        assertTrue(message.contains("\n  pool: ") && message.contains("largest free run"), message);
        assertTrue(message.contains("32768 bytes in 4 block(s) at ") && message.contains("scratchBuffers"), message);
        assertTrue(e.snapshotFile().isEmpty(), "no file unless asked for");
        assertFalse(message.contains("snapshot written"), message);
    }

    @Test
    void arenasCarryTheSummaryInTheirOutOfMemoryError() {
        DataMemHandler h = DataMem.createHandler("aligned64+stats+limit=4k");
        try (Arena arena = h.openArena()) {
            arena.allocate(3000);
            OutOfMemoryError oom = assertThrows(OutOfMemoryError.class, () -> arena.allocate(3000));
            assertTrue(oom.getMessage().contains("\n  limit: 3000 of 4096 bytes in use"), oom.getMessage());
            AllocationException cause = (AllocationException) oom.getCause();
            assertEquals(oom.getMessage(), cause.getMessage());
        }
    }

    @Test
    void filesAreCappedAndSummariesCanBeTurnedOff(@TempDir Path dir) throws IOException {
        System.setProperty(FailureSnapshots.ON_FAILURE_PROPERTY, dir.toString());
        System.setProperty(FailureSnapshots.MAX_FILES_PROPERTY, "0");
        DataMemHandler h = DataMem.createHandler("aligned64+stats+limit=1k");
        AllocationException capped = assertThrows(AllocationException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 2000)));
        assertTrue(capped.getMessage().endsWith("\n  snapshot not written: 0 written already ("
                + FailureSnapshots.MAX_FILES_PROPERTY + ")"), capped.getMessage());
        assertTrue(capped.snapshotFile().isEmpty());
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count());
        }

        System.setProperty(FailureSnapshots.SUMMARY_PROPERTY, "false");
        AllocationException plain = assertThrows(AllocationException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 2000)));
        assertEquals("handler 'aligned64+stats+limit=1k' refused 2000 bytes: limit 1024 bytes, 0 in use, 1024 left",
                plain.getMessage());
        assertEquals("", plain.summary());
    }

    @Test
    void aHandlerWithoutFiguresGetsAHint() {
        DataMemHandler h = DataMem.createHandler("aligned64");
        OutOfNativeMemoryException e = assertThrows(OutOfNativeMemoryException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 1L << 50)));
        assertEquals("  handler 'aligned64': no layer keeps figures (add +stats, or +tracking to see the blocks)",
                e.summary());
        assertTrue(e.getMessage().endsWith("out of native memory\n" + e.summary()), e.getMessage());
    }
}
