package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.testing.AllocatorConformanceTest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite through both directions at once: a Java handler
 * ({@code default_allocator+stats}) exported as a native {@code PyDataMem_Handler}, imported back
 * from its address. Each call goes from Java through a downcall into an upcall stub, the live-block
 * table (which supplies {@code realloc}'s old size) and back to the Java handler.
 */
class RoundTripConformanceTest extends AllocatorConformanceTest {

    private ExportedHandler exported;
    private StatisticsAdaptor stats;

    @Override
    protected DataMemAllocator allocator() {
        DataMemHandler handler = DataMem.createHandler("default_allocator+stats");
        stats = assertInstanceOf(StatisticsAdaptor.class, handler.allocator());
        exported = PyDataMem.export(handler);
        return PyDataMem.importHandler(exported.struct()).allocator();
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        ExportStatistics s = exported.statistics();
        exported.close();
        assertEquals(0, s.liveBlocks(), () -> "every block freed: " + s);
        assertEquals(0, s.liveBytes(), () -> "every byte freed: " + s);
        assertEquals(0, s.sizeMismatches() + s.foreignFrees() + s.doubleFrees() + s.foreignReallocs()
                + s.upcallErrors(), () -> "no anomaly: " + s + " " + exported.lastAnomaly());
        assertEquals(0, stats.figures().currentBytes(), "the Java handler got every byte back");
        assertEquals(s.allocations(), stats.figures().allocations(), "each allocation reached the Java handler");
    }
}
