package io.datamem.impl.shared;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.pool.PoolingAllocator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Export and import within one process (the importer takes the descriptor with pidfd_getfd from
 * itself, and maps the memfd a second time): bytes, caching, lifetime, stale and forged handles,
 * refusals, and no descriptor or mapping left behind.
 */
class SharedMemoryTest extends LeakCheckedTest {


    static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static MemorySegment filled(MemorySegment block, long byteSize, long seed) {
        MemorySegment s = block.reinterpret(byteSize);
        MemorySegment.copy(pattern(seed, (int) byteSize), 0, s, ValueLayout.JAVA_BYTE, 0, (int) byteSize);
        return s;
    }

    @Test
    void theWireFormRoundTripsAndRefusesGarbage() {
        IpcHandle h = new IpcHandle(1234, 7, 0x0123456789abcdefL, -2, 99, 8192, 4096, 100);
        assertEquals(IpcHandle.BYTES, h.toBytes().length);
        assertEquals(h, IpcHandle.fromBytes(h.toBytes()));
        assertEquals("0123456789abcdeffffffffffffffffe", h.tag());
        byte[] bad = h.toBytes();
        bad[0] ^= 1;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IpcHandle.fromBytes(bad)).getMessage()
                .contains("magic"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> IpcHandle.fromBytes(new byte[5])).getMessage()
                .contains("5 bytes (expected: 72)"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new IpcHandle(1, 3, 0, 0, 0, 4096, 4000, 97)).getMessage().contains("outside the mapping"));
        assertThrows(IllegalArgumentException.class, () -> new IpcHandle(0, 3, 0, 0, 0, 4096, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new IpcHandle(1, -1, 0, 0, 0, 4096, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new IpcHandle(1, 3, 0, 0, 0, 4096, Long.MAX_VALUE, 2));
    }

    @Test
    void anImportSeesTheExportersBytesBothWaysAndIsCachedPerMapping() {
        long size = 3 * 4096 + 5;
        MemorySegment block = allocator.malloc(size);
        MemorySegment exported = filled(block, size, 1);
        IpcHandle h = SharedMemory.handleOf(exported);
        assertEquals(0, h.byteOffset());
        assertEquals(size, h.byteSize());
        assertEquals(4 * 4096, h.mappingByteSize());
        assertEquals(ProcessHandle.current().pid(), h.exporterPid());
        int importedBefore = SharedMemory.importedMappings();
        try (ImportedMemory first = SharedMemory.open(h); ImportedMemory second = SharedMemory.open(h)) {
            assertNotEquals(block.address(), first.address(), "a mapping of its own, not the exporter's");
            assertEquals(first.address(), second.address(), "the second open is the cached mapping");
            assertEquals(importedBefore + 1, SharedMemory.importedMappings());
            assertArrayEquals(pattern(1, (int) size), first.segment().toArray(ValueLayout.JAVA_BYTE));
            first.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8, 0x1122334455667788L);
            assertEquals(0x1122334455667788L, exported.get(ValueLayout.JAVA_LONG_UNALIGNED, 8), "the importer's write"
                    + " is the exporter's memory");
            assertEquals(size, first.segment().byteSize());
        }
        assertEquals(importedBefore, SharedMemory.importedMappings(), "the last close unmaps");
        allocator.free(block, size);
    }

    @Test
    void aClosedImportRefusesItsSegmentWithoutCrashing() {
        MemorySegment block = allocator.malloc(64);
        ImportedMemory imported = SharedMemory.open(SharedMemory.handleOf(block.reinterpret(64)));
        MemorySegment segment = imported.segment();
        imported.close();
        imported.close();   // idempotent
        assertTrue(imported.isClosed());
        assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, imported::segment);
        assertThrows(IllegalStateException.class, imported::address);
        allocator.free(block, 64);
    }

    @Test
    void anImporterKeepsTheBytesAfterTheExporterFreesAndReuseNeverAliasesThem() {
        long size = 1 << 20;
        MemorySegment block = allocator.malloc(size);
        IpcHandle h = SharedMemory.handleOf(filled(block, size, 2));
        try (ImportedMemory imported = SharedMemory.open(h)) {
            allocator.free(block, size);
            assertArrayEquals(pattern(2, (int) size), imported.segment().toArray(ValueLayout.JAVA_BYTE),
                    "the pages live on in the importer after the exporter's free");
            MemorySegment next = allocator.malloc(size);
            filled(next, size, 3);
            IpcHandle h2 = SharedMemory.handleOf(next.reinterpret(size));
            assertNotEquals(h.tag(), h2.tag(), "a new block is a new mapping");
            assertArrayEquals(pattern(2, (int) size), imported.segment().toArray(ValueLayout.JAVA_BYTE),
                    "the exporter's next block does not share the imported pages");
            allocator.free(next, size);
        }
    }

    @Test
    void aStaleHandleIsRefusedEvenWhenItsDescriptorNumberIsReused() {
        MemorySegment block = allocator.malloc(4096);
        IpcHandle stale = SharedMemory.handleOf(block.reinterpret(4096));
        allocator.free(block, 4096);
        IpcException e = assertThrows(IpcException.class, () -> SharedMemory.open(stale));
        assertEquals(IpcException.Reason.NO_SUCH_MAPPING, e.reason());
        assertTrue(e.getMessage().contains("freed"), e.getMessage());

        MemorySegment reused = allocator.malloc(4096);   // the lowest free descriptor: most likely the same number
        IpcHandle fresh = SharedMemory.handleOf(reused.reinterpret(4096));
        IpcException again = assertThrows(IpcException.class, () -> SharedMemory.open(stale));
        assertEquals(IpcException.Reason.NO_SUCH_MAPPING, again.reason(), again.getMessage());
        if (fresh.exporterFd() == stale.exporterFd()) {
            assertTrue(again.getMessage().contains("not the mapping the handle names"), again.getMessage());
        }
        allocator.free(reused, 4096);
    }

    @Test
    void forgedHandlesAreRefusedAndMapNothing() {
        MemorySegment block = allocator.malloc(8192);
        IpcHandle h = SharedMemory.handleOf(block.reinterpret(8192));
        int imported = SharedMemory.importedMappings();
        IpcHandle otherTag = new IpcHandle(h.exporterPid(), h.exporterFd(), h.tagHigh() ^ 1, h.tagLow(), h.inode(),
                h.mappingByteSize(), 0, 8);
        assertEquals(IpcException.Reason.NO_SUCH_MAPPING,
                assertThrows(IpcException.class, () -> SharedMemory.open(otherTag)).reason());
        IpcHandle otherInode = new IpcHandle(h.exporterPid(), h.exporterFd(), h.tagHigh(), h.tagLow(), h.inode() + 1,
                h.mappingByteSize(), 0, 8);
        assertEquals(IpcException.Reason.NO_SUCH_MAPPING,
                assertThrows(IpcException.class, () -> SharedMemory.open(otherInode)).reason());
        IpcHandle larger = new IpcHandle(h.exporterPid(), h.exporterFd(), h.tagHigh(), h.tagLow(), h.inode(),
                1L << 30, (1L << 30) - 8, 8);
        IpcException tooLarge = assertThrows(IpcException.class, () -> SharedMemory.open(larger));
        assertEquals(IpcException.Reason.MISMATCH, tooLarge.reason());
        assertTrue(tooLarge.getMessage().contains("holds 8192 bytes"), tooLarge.getMessage());
        IpcHandle stdin = new IpcHandle(h.exporterPid(), 0, h.tagHigh(), h.tagLow(), h.inode(), 8192, 0, 8);
        assertEquals(IpcException.Reason.NO_SUCH_MAPPING,
                assertThrows(IpcException.class, () -> SharedMemory.open(stdin)).reason());
        assertEquals(imported, SharedMemory.importedMappings(), "nothing was mapped");

        try (ImportedMemory real = SharedMemory.open(h)) {   // cached now: a forged size is still refused
            assertEquals(8192, real.byteSize());
            assertEquals(IpcException.Reason.MISMATCH,
                    assertThrows(IpcException.class, () -> SharedMemory.open(larger)).reason());
        }
        allocator.free(block, 8192);
    }

    @Test
    void aHandleOfAProcessThatIsGoneSaysSo() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        IpcHandle h = new IpcHandle(p.pid(), 3, 1, 2, 3, 4096, 0, 4096);
        IpcException e = assertThrows(IpcException.class, () -> SharedMemory.open(h));
        assertEquals(IpcException.Reason.EXPORTER_GONE, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("process " + p.pid() + " is gone"), e.getMessage());
    }

    @Test
    void pooledBlocksExportTheirRunAndOffset() {
        DataMemHandler pooled = DataMem.createHandler("pool(shared)");
        PoolingAllocator pool = (PoolingAllocator) pooled.allocator();
        try {
            MemorySegment a = pool.malloc(100);
            MemorySegment b = pool.malloc(100);
            filled(b, 100, 4);
            IpcHandle ha = SharedMemory.handleOf(a.reinterpret(100));
            IpcHandle hb = SharedMemory.handleOf(b.reinterpret(100));
            assertEquals(ha.tag(), hb.tag(), "two small blocks share one run's mapping");
            assertNotEquals(ha.byteOffset(), hb.byteOffset());
            int imported = SharedMemory.importedMappings();
            try (ImportedMemory ia = SharedMemory.open(ha); ImportedMemory ib = SharedMemory.open(hb)) {
                assertEquals(imported + 1, SharedMemory.importedMappings(), "one mapping for the run");
                assertEquals(hb.byteOffset() - ha.byteOffset(), ib.address() - ia.address());
                assertArrayEquals(pattern(4, 100), ib.segment().toArray(ValueLayout.JAVA_BYTE));
            }
            pool.free(a, 100);
            pool.free(b, 100);
        } finally {
            pool.close();
        }
    }

    @Test
    void arraysExportAndImportAsArrays() {
        DataMemHandler shared = DataMem.createHandler("shared");
        try (NDArray a = DataMem.callWith(shared, () -> NDArray.empty(DType.FLOAT64, 300, 7))) {
            for (int i = 0; i < 2100; i++) {
                a.segment().setAtIndex(ValueLayout.JAVA_DOUBLE, i, i * 0.5);
            }
            IpcHandle h = SharedMemory.handleOf(a);
            assertEquals(2100 * 8, h.byteSize());
            NDArray b = SharedMemory.open(h).toArray(DType.FLOAT64, 300, 7);
            assertEquals("shared_import", b.handler().name());
            assertEquals(a.segment().mismatch(b.segment()), -1, "bit-exact");
            NDArray column = a.reshape(2100).slice(io.datamem.array.Slice.every(2));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> SharedMemory.handleOf(column)).getMessage()
                    .contains("not C-contiguous"));
            ImportedMemory tooSmall = SharedMemory.open(h);
            assertThrows(IllegalArgumentException.class, () -> tooSmall.toArray(DType.FLOAT64, 2101));
            assertTrue(tooSmall.isClosed(), "a failed toArray releases its reference");
            b.close();
        }
    }

    @Test
    void anImportedArrayCannotResize() {
        DataMemHandler shared = DataMem.createHandler("shared");
        try (NDArray a = DataMem.callWith(shared, () -> NDArray.empty(DType.INT64, 1000))) {
            for (int i = 0; i < 1000; i++) {
                a.segment().setAtIndex(ValueLayout.JAVA_LONG, i, i * 3L);
            }
            try (NDArray b = SharedMemory.open(SharedMemory.handleOf(a)).toArray(DType.INT64, 1000)) {
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                        () -> b.resize(2000));
                assertTrue(e.getMessage().contains("shared_import") && e.getMessage().contains("resize"),
                        e.getMessage());
                assertArrayEquals(new long[] {1000}, b.shape(), "the array keeps its shape");
                assertEquals(2997L, b.segment().getAtIndex(ValueLayout.JAVA_LONG, 999), "and its contents");
                assertThrows(UnsupportedOperationException.class, () -> b.handler().allocator().malloc(8));
            }
        }
    }

    @Test
    void anEmptyBlockAtTheMappingsEndImportsAndReleases() {
        MemorySegment block = allocator.malloc(4096);
        IpcHandle end = SharedMemory.handleOf(block.reinterpret(4096)).withBlock(4096, 0);
        int imported = SharedMemory.importedMappings();
        NDArray empty = SharedMemory.open(end).toArray(DType.UINT8, 0);
        assertEquals(imported + 1, SharedMemory.importedMappings());
        empty.close();
        assertEquals(imported, SharedMemory.importedMappings(), "the array's free found its mapping");
        allocator.free(block, 4096);
    }

    @Test
    void memoryThatIsNotSharedHasNoHandle() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment plain = arena.allocate(64);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SharedMemory.handleOf(plain));
            assertTrue(e.getMessage().contains("not inside a live shared mapping"), e.getMessage());
        }
        MemorySegment block = allocator.malloc(4096);
        assertThrows(IllegalArgumentException.class, () -> SharedMemory.handleOf(block.reinterpret(4097)),
                "a range running past its mapping");
        allocator.free(block, 4096);
    }

    @Test
    void foreignDoubleAndWrongSizeFreesAreRefusedAndChangeNothing() {
        MemorySegment block = allocator.malloc(100);
        IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class, () -> allocator.free(block, 101));
        assertTrue(wrong.getMessage().contains("allocated with 100 bytes"), wrong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> allocator.free(block.asSlice(0).reinterpret(200)
                .asSlice(8), 100), "an interior pointer");
        assertEquals(1, allocator.liveBlocks());
        allocator.free(block, 100);
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> allocator.free(block, 100));
        assertTrue(twice.getMessage().contains("not a live block"), twice.getMessage());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment foreign = arena.allocate(100);
            assertThrows(IllegalArgumentException.class, () -> allocator.free(foreign, 100));
            assertThrows(IllegalArgumentException.class, () -> allocator.realloc(foreign, 100, 200));
        }
    }

    @Test
    void reallocKeepsAnImportersOldBytes() {
        MemorySegment block = allocator.malloc(4000);
        filled(block, 4000, 5);
        assertEquals(block.address(), allocator.realloc(block, 4000, 4096).address(), "fits its page: in place");
        try (ImportedMemory imported = SharedMemory.open(SharedMemory.handleOf(block.reinterpret(4096)))) {
            MemorySegment moved = allocator.realloc(block, 4096, 3 * 4096);
            assertNotEquals(block.address(), moved.address());
            moved.reinterpret(4000).fill((byte) 0);
            assertArrayEquals(pattern(5, 4000), imported.segment().asSlice(0, 4000).toArray(ValueLayout.JAVA_BYTE));
            allocator.free(moved, 3 * 4096);
        }
    }
}
