package io.datamem.ucx;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The handler names {@code ucx} and {@code LEAF+ucx} on the shared context, and their refusals. */
class UcxHandlerNamesTest {

    @Test
    void namesMakeRegisteredArrays() {
        UcxTests.assumeUcx();
        UcxContext shared = UcxContext.shared();
        int before = shared.liveRegistrations();
        for (String name : new String[] {"ucx", "aligned64+ucx", "pool(aligned4096)+ucx"}) {
            DataMemHandler h = DataMem.createHandler(name);
            try (NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 1000))) {
                assertEquals(before + 1, shared.liveRegistrations(), name);
                RemoteRegion r = shared.export(a);
                assertEquals(a.segment().address(), r.address(), name);
                assertEquals(8000, r.byteSize(), name);
            }
            assertEquals(before, shared.liveRegistrations(), name + ": the block's registration goes with it");
        }
        assertInstanceOf(UcxAllocator.class, DataMem.createHandler("ucx").allocator());
        assertThrows(UnsupportedOperationException.class, shared::close);
    }

    @Test
    void aReallocOfAForeignPointerReadsNothingAndLeaksNothing() {
        UcxTests.assumeUcx();
        UcxContext shared = UcxContext.shared();
        int before = shared.liveRegistrations();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment foreign = arena.allocate(4096);
            for (String name : new String[] {"ucx", "aligned64+ucx"}) {
                io.datamem.DataMemAllocator a = DataMem.createHandler(name).allocator();
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> a.realloc(foreign, 4096, 8192), name);
                assertTrue(e.getMessage().contains("expected: a live block"), name + ": " + e.getMessage());
                // an unmapped address too: refused before anything is read from it
                assertThrows(IllegalArgumentException.class,
                        () -> a.realloc(java.lang.foreign.MemorySegment.ofAddress(8L << 40), 4096, 8192), name);
                assertEquals(before, shared.liveRegistrations(), name + ": no block left registered");
            }
        }
    }

    @Test
    void malformedTermsAreRefused() {
        UcxTests.assumeUcx();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataMem.createHandler("ucx:fast"));
        assertTrue(e.getMessage().contains("ucx takes no options"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler("aligned64+ucx=1"));
        assertTrue(e.getMessage().contains("ucx takes no options"), e.getMessage());
    }
}
