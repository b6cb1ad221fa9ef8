package io.datamem.numpy;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against NEP 49's own sample handler, written in C
 * ({@code native/nep49_shift_alloc.c}) and imported with {@link PyDataMem#importHandler}: every
 * call crosses into C, and the C side checks that each free comes back with the size it recorded.
 */
class ShiftAllocConformanceTest extends AllocatorConformanceTest {

    @TempDir
    static Path dir;

    private static ShiftAlloc sample;

    @BeforeAll
    static void compile() {
        sample = ShiftAlloc.compile(dir);
    }

    @Override
    protected DataMemAllocator allocator() {
        sample.reset();
        return PyDataMem.importHandler(sample.handlerStruct()).allocator();
    }

    @Override
    protected String handlerName() {
        return "secret_data_allocator";
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, sample.violations(), () -> "the C sample saw a wrong size or pointer: "
                + sample.lastViolation());
        assertEquals(0, sample.liveBlocks(), "every block freed in C");
        assertEquals(0, sample.liveBytes(), "every byte freed in C");
    }
}
