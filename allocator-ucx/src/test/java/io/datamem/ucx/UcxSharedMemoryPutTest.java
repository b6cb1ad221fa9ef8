package io.datamem.ucx;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The progress and allocation options, and the direct shared-memory put: into a block of a
 * {@code ucx} allocator whose context allocates with {@link UcxContext#SHARED_MEMORY_ALLOC_PRIO},
 * a put over {@code sm} completes with no progress at the target at all.
 */
class UcxSharedMemoryPutTest {

    @Test
    void optionsCarryAndValidateTheNewComponents() {
        UcxContext.Options d = UcxContext.Options.defaults();
        assertEquals(UcxContext.DEFAULT_PROGRESS_SPIN, d.progressSpin());
        assertEquals(UcxContext.ALLOC_PRIO, d.allocationMethods());
        UcxContext.Options o = d.withProgressSpin(Duration.ofMillis(2))
                .withAllocationMethods(UcxContext.SHARED_MEMORY_ALLOC_PRIO).withName("x").withTransports("sm");
        assertEquals(Duration.ofMillis(2), o.progressSpin());
        assertEquals(UcxContext.SHARED_MEMORY_ALLOC_PRIO, o.allocationMethods());
        assertEquals("x", o.name());
        assertThrows(IllegalArgumentException.class, () -> d.withProgressSpin(Duration.ofNanos(-1)));
        assertThrows(NullPointerException.class, () -> d.withProgressSpin(null));
        assertThrows(IllegalArgumentException.class, () -> d.withAllocationMethods(" "));
        assertThrows(NullPointerException.class, () -> d.withAllocationMethods(null));
    }

    @Test
    void hostOnlyTransportsSkipThePeerFailureProbe() {
        assertTrue(UcxEndpoint.hostOnly("sm"));
        assertTrue(UcxEndpoint.hostOnly("posix, sysv,cma"));
        assertFalse(UcxEndpoint.hostOnly(null));
        assertFalse(UcxEndpoint.hostOnly("tcp"));
        assertFalse(UcxEndpoint.hostOnly("sm,tcp"));
        assertFalse(UcxEndpoint.hostOnly("^tcp"));
    }

    @Test
    void aPutIntoSharedMemoryNeedsNoTargetProgress() {
        UcxTests.assumeUcx();
        UcxContext.Options o = UcxContext.Options.defaults().withTransports("sm").withTimeout(Duration.ofSeconds(5))
                .withAllocationMethods(UcxContext.SHARED_MEMORY_ALLOC_PRIO);
        // the target has no progress thread and nobody drives its worker: a put that needed it
        // (an active message the target copies out) would time out
        try (UcxContext a = UcxContext.open(o.withName("a"));
             UcxContext b = UcxContext.open(o.withName("b").withProgressThread(false));
             Arena arena = Arena.ofConfined()) {
            UcxEndpoint ab = a.connect(b.workerAddress(), "b");
            int n = 1 << 20;
            UcxAllocator alloc = UcxAllocator.of(b);
            MemorySegment target = alloc.malloc(n);
            try {
                RemoteRegion region = b.export(target);
                byte[] data = new byte[n];
                new Random(5).nextBytes(data);
                MemorySegment src = arena.allocate(n).copyFrom(MemorySegment.ofArray(data));
                for (int i = 0; i < 3; i++) {
                    ab.put(src, region, 0);
                }
                assertArrayEquals(data, target.toArray(ValueLayout.JAVA_BYTE));
                // UCX unlinks its file at once: nothing in /dev/shm even while the block lives
                assertEquals(java.util.List.of(), ucxFiles(), "UCX files in /dev/shm");
            } finally {
                alloc.free(target, n);
            }
            assertEquals(0, b.liveRegistrations());
        }
    }

    private static java.util.List<String> ucxFiles() {
        String[] names = new File("/dev/shm").list();
        return names == null ? java.util.List.of()
                : java.util.Arrays.stream(names).filter(f -> f.startsWith("ucx")).toList();
    }
}
