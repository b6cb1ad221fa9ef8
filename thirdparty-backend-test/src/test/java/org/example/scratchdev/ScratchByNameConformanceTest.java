package org.example.scratchdev;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite over handlers built by name through datamem's registry, which found the
 * {@code scratchdev} provider with {@link java.util.ServiceLoader}: the leaf alone and under one of
 * datamem's adaptors ({@code +stats}, from {@code allocator-impl}, on the test path only).
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"scratchdev:2", "scratchdev:2+stats"})
class ScratchByNameConformanceTest extends AllocatorConformanceTest {

    private static final ScratchDevice DEVICE = ScratchDevice.of(2);

    private final String name;
    private long blocksBefore;

    ScratchByNameConformanceTest(String name) {
        this.name = name;
    }

    @Override
    protected DataMemAllocator allocator() {
        blocksBefore = DEVICE.liveBlocks();
        DataMemAllocator a = DataMem.createHandler(name).allocator();
        assertEquals(DEVICE, ScratchTests.deviceOf(a), "the handler allocates on device 2");
        return a;
    }

    @Override
    protected String handlerName() {
        return name;
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        ScratchTests.write(DEVICE, ptr, offset, bytes);
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        return ScratchTests.read(DEVICE, ptr, offset, length);
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(blocksBefore, DEVICE.liveBlocks(), "every block went back to " + DEVICE.name());
    }
}
