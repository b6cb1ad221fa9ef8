package io.datamem.arrow.memory;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.testing.CountingAllocator;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.testing.Nep49SampleAllocator;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Arrow Java's buffers allocated through datamem handlers. */
class HandlerAllocationManagerTest {

    private static BufferAllocator root(DataMemHandler handler) {
        return new RootAllocator(RootAllocator.configBuilder()
                .allocationManagerFactory(HandlerAllocationManager.factory(handler)).build());
    }

    @Test
    void everyArrowBufOfAVectorComesFromTheHandlersStatistics() {
        DataMemHandler handler = DataMem.createHandler("default_allocator+stats");
        StatisticsAdaptor stats = assertInstanceOf(StatisticsAdaptor.class, handler.allocator());
        try (BufferAllocator root = root(handler)) {
            try (IntVector v = new IntVector("v", root)) {
                v.allocateNew(1000);
                for (int i = 0; i < 1000; i++) {
                    v.set(i, i);
                }
                v.setValueCount(1000);
                assertTrue(stats.figures().allocations() >= 1, "the data and validity buffers (one block): " + stats.figures());
                assertEquals(root.getAllocatedMemory(), stats.figures().currentBytes(),
                        "every byte Arrow holds is the handler's: " + stats.figures());
                assertTrue(stats.figures().currentBytes() >= 4000 + 125);
                assertEquals(999, v.get(999));
            }
            assertEquals(0, stats.figures().currentBytes(), "closing the vector freed through the handler");
            assertEquals(stats.figures().allocations(), stats.figures().frees());
            assertEquals(stats.figures().allocatedBytes(), stats.figures().freedBytes(), "freed with the sizes allocated");
            try (VarCharVector s = new VarCharVector("s", root)) {
                s.allocateNew();
                s.setSafe(0, "datamem".getBytes(StandardCharsets.UTF_8));
                s.setValueCount(1);
                assertEquals(root.getAllocatedMemory(), stats.figures().currentBytes());
            }
        }
        assertEquals(0, stats.figures().currentBytes());
        assertEquals(stats.figures().allocatedBytes(), stats.figures().freedBytes());
    }

    @Test
    void sizesGoBackExactly() {
        Nep49SampleAllocator sample = new Nep49SampleAllocator();
        CountingAllocator counting = new CountingAllocator(sample);
        DataMemHandler handler = DataMemHandler.of("arrow-sized", counting);
        try (BufferAllocator root = root(handler)) {
            for (int size : new int[] {1, 64, 1000, 1 << 20}) {
                try (ArrowBuf buf = root.buffer(size)) {
                    buf.setByte(size - 1, 7);
                    assertEquals(1, counting.liveBlocks());
                    assertTrue(counting.liveBytes() >= size);
                }
            }
            assertEquals(0, root.getEmpty().capacity());
        }
        assertEquals(0, counting.liveBlocks());
        assertEquals(List.of(), sample.violations(), "every free had the allocated size");
    }

    @Test
    void aLimitIsArrowsOutOfMemory() {
        DataMemHandler limited = AllocatorStack.on(DataMem.builtinDefault().allocator()).with("limit=4096")
                .handler("limited");
        try (BufferAllocator root = root(limited)) {
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> root.buffer(1 << 20));
            assertTrue(e.getMessage().contains("limited"), e.getMessage());
            assertEquals(0, root.getAllocatedMemory(), "Arrow's accounting rolled back");
            try (ArrowBuf small = root.buffer(1024)) {
                assertEquals(1024, small.capacity());
            }
        }
    }

    @Test
    void deviceHandlersAreRefused() {
        DataMemHandler device = DataMemHandler.of("fake-cuda",
                FakeDeviceAllocator.cudaDevice(DataMem.builtinDefault().allocator()));
        assertThrows(IllegalArgumentException.class, () -> HandlerAllocationManager.factory(device));
        assertThrows(NullPointerException.class, () -> HandlerAllocationManager.factory(null));
        DataMemHandler handler = DataMem.createHandler("default_allocator+stats");
        assertTrue(DataMem.callWith(handler, () -> HandlerAllocationManager.factory()).toString()
                .contains("default_allocator+stats"));
    }
}
