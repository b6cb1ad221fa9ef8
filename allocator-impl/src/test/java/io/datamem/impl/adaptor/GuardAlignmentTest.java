package io.datamem.impl.adaptor;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A guarded block is aligned as its {@code traitsOf} says, whatever alignment the upstream gives the
 * block it carved (a pool's block classes keep alignments above the pool's overall one).
 */
class GuardAlignmentTest {

    private static void assertAligned(DataMemAllocator a, MemorySegment p, String what) {
        assertTrue(p.address() != 0, what + " returned NULL");
        long alignment = a.traitsOf(p).byteAlignment();
        assertTrue(alignment >= a.traits().byteAlignment(), what + ": traitsOf alignment " + alignment
                + " below the allocator's " + a.traits().byteAlignment());
        assertEquals(0, p.address() % alignment, () -> what + " returned 0x" + Long.toHexString(p.address())
                + " while traitsOf says byteAlignment " + alignment);
    }

    @ParameterizedTest
    @ValueSource(strings = {"pool(aligned64)+guard", "pool(default_allocator)+guard", "pool(aligned:4096)+guard",
            "aligned64+guard", "default_allocator+guard", "aligned:4096+guard", "pool(aligned64)+stats+guard"})
    void everyBlockIsAlignedAsTraitsOfSays(String name) {
        DataMemAllocator a = DataMem.createHandler(name).allocator();
        List<long[]> live = new ArrayList<>();
        List<MemorySegment> ptrs = new ArrayList<>();
        long[] sizes = {0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256, 300,
                500, 512, 1000, 1024, 2000, 4000, 4096, 5000, 8192, 10_000, 65_536, 100_000};
        for (long size : sizes) {
            MemorySegment p = a.malloc(size);
            assertAligned(a, p, name + " malloc(" + size + ")");
            ptrs.add(p);
            live.add(new long[] {size});
            MemorySegment c = a.calloc(3, size);
            assertAligned(a, c, name + " calloc(3, " + size + ")");
            for (long i = 0; i < 3 * size; i++) {
                assertEquals(0, c.reinterpret(3 * size).get(java.lang.foreign.ValueLayout.JAVA_BYTE, i));
            }
            ptrs.add(c);
            live.add(new long[] {3 * size});
        }
        for (int i = 0; i < ptrs.size(); i++) {
            long old = live.get(i)[0];
            long next = old * 3 / 2 + 17;
            MemorySegment r = a.realloc(ptrs.get(i), old, next);
            assertAligned(a, r, name + " realloc(" + old + " -> " + next + ")");
            ptrs.set(i, r);
            live.get(i)[0] = next;
        }
        for (int i = 0; i < ptrs.size(); i++) {
            a.free(ptrs.get(i), live.get(i)[0]);
        }
        assertEquals(0, ((GuardAdaptor) a).liveCount());
        assertTrue(((GuardAdaptor) a).violations().isEmpty(), () -> ((GuardAdaptor) a).report());
    }
}
