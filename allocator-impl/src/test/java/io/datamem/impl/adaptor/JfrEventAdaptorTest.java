package io.datamem.impl.adaptor;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JFR events of the {@code jfr} adaptor, read back from a recording. */
class JfrEventAdaptorTest {

    @TempDir
    Path dir;

    @Test
    void operationsBecomeEventsWithHandlerSizeAndAddress() throws Exception {
        DataMemAllocator a = DataMem.createHandler("aligned64+jfr").allocator();
        MemorySegment outside = a.malloc(7); // no recording: no event
        Path file = dir.resolve("datamem.jfr");
        MemorySegment p;
        MemorySegment q;
        MemorySegment z;
        try (Recording r = new Recording()) {
            r.enable("io.datamem.Allocation");
            r.enable("io.datamem.Free");
            r.start();
            p = a.malloc(1000);
            z = a.calloc(10, 10);
            q = a.realloc(p, 1000, 5000);
            a.free(q, 5000);
            a.free(z, 100);
            a.malloc(1L << 50);
            r.stop();
            r.dump(file);
        }
        a.free(outside, 7);
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("io.datamem.")
                        && !e.getEventType().getName().equals("io.datamem.PoolMemory"))   // periodic, below
                .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime))
                .toList();
        assertEquals(List.of("io.datamem.Allocation", "io.datamem.Allocation", "io.datamem.Allocation",
                "io.datamem.Free", "io.datamem.Free", "io.datamem.Allocation"),
                events.stream().map(e -> e.getEventType().getName()).toList());
        RecordedEvent malloc = events.get(0);
        assertEquals("aligned64+jfr", malloc.getString("handler"));
        assertEquals("malloc", malloc.getString("operation"));
        assertEquals(p.address(), malloc.getLong("address"));
        assertEquals(1000, malloc.getLong("byteSize"));
        assertTrue(malloc.getStackTrace() != null && !malloc.getStackTrace().getFrames().isEmpty());
        assertEquals(100, events.get(1).getLong("byteSize"));
        RecordedEvent realloc = events.get(2);
        assertEquals(p.address(), realloc.getLong("previousAddress"));
        assertEquals(1000, realloc.getLong("previousByteSize"));
        assertEquals(q.address(), realloc.getLong("address"));
        assertEquals(5000, realloc.getLong("byteSize"));
        RecordedEvent free = events.get(3);
        assertEquals(q.address(), free.getLong("address"));
        assertEquals(5000, free.getLong("byteSize"));
        assertEquals(0, events.get(5).getLong("address"), "a failed allocation has address 0");
    }

    @Test
    void aPoolUnderTheAdaptorIsDescribedPeriodically() throws Exception {
        DataMemAllocator a = DataMem.createHandler("pool(aligned64)+jfr").allocator();
        List<MemorySegment> blocks = new java.util.ArrayList<>();
        for (int i = 0; i < 64; i++) {
            blocks.add(a.malloc(1000));
        }
        for (int i = 0; i < blocks.size(); i += 2) {
            a.free(blocks.get(i), 1000);
        }
        Path file = dir.resolve("pool.jfr");
        try (Recording r = new Recording()) {
            r.enable("io.datamem.PoolMemory").withPeriod(java.time.Duration.ofMillis(50));
            r.start();
            Thread.sleep(400);
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> pools = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("io.datamem.PoolMemory"))
                .filter(e -> e.getString("handler").equals("pool(aligned64)+jfr"))
                .toList();
        assertTrue(!pools.isEmpty(), "no io.datamem.PoolMemory event for the pool");
        RecordedEvent e = pools.getLast();
        long free = e.getLong("freeBytes");
        assertTrue(free >= 32 * 1000, "the freed half is free: " + free);
        assertTrue(e.getLong("heldBytes") >= free + 32 * 1000, e.toString());
        long run = e.getLong("largestFreeRunBytes");
        assertTrue(run > 0 && run <= free, e.toString());
        for (int i = 1; i < blocks.size(); i += 2) {
            a.free(blocks.get(i), 1000);
        }
    }
}
