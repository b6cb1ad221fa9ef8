package io.datamem.impl.shared;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What every shared-memory test checks after each test: no block of its allocator left live, and
 * this process's memfd descriptors and mappings as they were before it.
 */
abstract class LeakCheckedTest {

    /** The allocator the test allocates through. */
    final SharedMemoryAllocator allocator = SharedMemoryAllocator.of();
    private SharedFds.Snapshot before;

    @BeforeEach
    void countBefore() {
        before = SharedFds.Snapshot.take();
    }

    @AfterEach
    void nothingLeaks() {
        assertEquals(0, allocator.liveBlocks(), "blocks the test left live");
        assertEquals(before, SharedFds.Snapshot.take(), "memfd descriptors and mappings before and after");
    }
}
