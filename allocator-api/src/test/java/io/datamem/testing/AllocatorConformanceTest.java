package io.datamem.testing;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conformance suite every allocator and adaptor passes: extend it, implement
 * {@link #allocator()}, and the allocator is checked for the whole {@link DataMemAllocator}
 * contract: sizes (zero, odd, page-sized, large), alignment of every block, zeroing, overflow,
 * caller mistakes, exhaustion, realloc preserving data and alignment, sized free, concurrency with
 * exact accounting and cross-thread frees, and the array and arena paths through a handler.
 *
 * <p>Device allocators override {@link #write} and {@link #read} to copy through their backend;
 * the array and arena tests then report themselves skipped with the reason.
 */
public abstract class AllocatorConformanceTest {

    /**
     * The allocator under test. Called once per test method.
     *
     * @return the allocator
     */
    protected abstract DataMemAllocator allocator();

    private DataMemAllocator current;

    /**
     * The allocator of the running test (created on first use).
     *
     * @return the allocator
     */
    protected final DataMemAllocator subject() {
        if (current == null) {
            current = allocator();
        }
        return current;
    }

    /**
     * The handler name the array tests use.
     *
     * @return a name
     */
    protected String handlerName() {
        return getClass().getSimpleName();
    }

    /**
     * The sizes every size-driven test covers.
     *
     * @return sizes in bytes
     */
    protected long[] sizes() {
        return new long[] {0, 1, 7, 8, 15, 16, 63, 64, 65, 100, 4095, 4096, 4097, 65536, 65537, 1 << 20,
                (16 << 20) + 3};
    }

    /**
     * A size the allocator cannot provide, for the exhaustion test.
     *
     * @return bytes; by default 2^50 (1 PiB)
     */
    protected long exhaustingSize() {
        return 1L << 50;
    }

    /**
     * Threads in the concurrency tests.
     *
     * @return thread count
     */
    protected int threads() {
        return 4;
    }

    /**
     * Operations per thread in the concurrency tests.
     *
     * @return count
     */
    protected int operationsPerThread() {
        return 2000;
    }

    /**
     * Writes bytes at an offset of a block. Host memory by default; device allocators copy.
     *
     * @param ptr    a block
     * @param offset bytes from its start
     * @param bytes  what to write
     */
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        MemorySegment.copy(bytes, 0, ptr.reinterpret(offset + bytes.length), ValueLayout.JAVA_BYTE, offset,
                bytes.length);
    }

    /**
     * Reads bytes at an offset of a block. Host memory by default; device allocators copy.
     *
     * @param ptr    a block
     * @param offset bytes from its start
     * @param length how many
     * @return the bytes
     */
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        byte[] out = new byte[length];
        MemorySegment.copy(ptr.reinterpret(offset + length), ValueLayout.JAVA_BYTE, offset, out, 0, length);
        return out;
    }

    /**
     * Checks that the allocator is in a clean state after a test (no violations, nothing leaked).
     * Override to add checks; the default does nothing.
     *
     * @param allocator the allocator the test used
     */
    protected void verifyAfterTest(DataMemAllocator allocator) {
    }

    @AfterEach
    final void verifyAllocatorState() {
        if (current != null) {
            verifyAfterTest(current);
            current = null;
        }
    }

    private static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private void checkAligned(MemorySegment p, long size) {
        long alignment = subject().traits().byteAlignment();
        assertEquals(0, p.address() % alignment, () -> "block of " + size + " bytes at 0x"
                + Long.toHexString(p.address()) + " is not aligned to the guaranteed " + alignment);
    }

    /** Writes a pattern at both ends of a block and reads it back. */
    private void checkWritable(MemorySegment p, long size, long seed) {
        if (size == 0) {
            return;
        }
        int n = (int) Math.min(size, 256);
        byte[] head = pattern(seed, n);
        byte[] tail = pattern(~seed, n);
        write(p, 0, head);
        write(p, size - n, tail);
        if (size >= 2L * n) {
            assertArrayEquals(head, read(p, 0, n), "head of block of " + size + " bytes");
        }
        assertArrayEquals(tail, read(p, size - n, n), "tail of block of " + size + " bytes");
    }

    // -------------------------------------------------------------------------------------------------

    @Test
    void traitsAreConsistent() {
        MemoryTraits t = subject().traits();
        assertNotNull(t);
        assertEquals(1, Long.bitCount(t.byteAlignment()), "alignment is a power of two");
        assertTrue(t.byteAlignment() >= 8, "alignment at least 8 bytes, got " + t.byteAlignment());
        assertEquals(t.kind() != MemoryKind.DEVICE, t.hostAccessible(),
                "only device memory lacks a host view: " + t);
    }

    @Test
    void mallocEverySizeIsAlignedWritableAndFreedWithItsSize() {
        DataMemAllocator a = subject();
        for (long size : sizes()) {
            MemorySegment p = a.malloc(size);
            assertNotEquals(0, p.address(), "malloc(" + size + ") returned NULL");
            checkAligned(p, size);
            checkWritable(p, size, size);
            assertNotNull(a.traitsOf(p));
            a.free(p, size);
        }
    }

    @Test
    void mallocZeroReturnsUniqueFreeablePointers() {
        DataMemAllocator a = subject();
        MemorySegment p = a.malloc(0);
        MemorySegment q = a.malloc(0);
        assertNotEquals(0, p.address(), "malloc(0) is a unique pointer, not NULL");
        assertNotEquals(0, q.address());
        assertNotEquals(p.address(), q.address(), "two live malloc(0) blocks are distinct");
        checkAligned(p, 0);
        a.free(p, 0);
        a.free(q, 0);
    }

    @Test
    void callocIsZeroedForEverySize() {
        DataMemAllocator a = subject();
        for (long size : sizes()) {
            MemorySegment p = a.calloc(size, 1);
            assertNotEquals(0, p.address(), "calloc(" + size + ", 1) returned NULL");
            checkAligned(p, size);
            int n = (int) Math.min(size, 4096);
            assertArrayEquals(new byte[n], read(p, 0, n), "head of calloc(" + size + ") is zero");
            if (size > n) {
                assertArrayEquals(new byte[n], read(p, size - n, n), "tail of calloc(" + size + ") is zero");
            }
            checkWritable(p, size, size);
            a.free(p, size);
        }
        MemorySegment p = a.calloc(1000, 8);
        assertArrayEquals(new byte[8000], read(p, 0, 8000));
        a.free(p, 8000);
    }

    @Test
    void callocWithAZeroFactorIsAUniquePointer() {
        DataMemAllocator a = subject();
        MemorySegment p = a.calloc(0, 8);
        MemorySegment q = a.calloc(8, 0);
        assertNotEquals(0, p.address());
        assertNotEquals(0, q.address());
        a.free(p, 0);
        a.free(q, 0);
    }

    @Test
    void callocOverflowReturnsNull() {
        DataMemAllocator a = subject();
        assertEquals(0, a.calloc(Long.MAX_VALUE / 2, 3).address(), "count * size overflows a long");
        assertEquals(0, a.calloc(1L << 40, 1L << 40).address(), "count * size overflows 64 bits");
        assertEquals(0, a.calloc(DataMemAllocator.MAX_BYTE_SIZE, 2).address(), "above MAX_BYTE_SIZE");
        assertEquals(0, a.calloc(Long.MAX_VALUE, Long.MAX_VALUE).address());
    }

    @Test
    void callerMistakesAreIllegalArgumentsBeforeAnyNativeCall() {
        DataMemAllocator a = subject();
        assertThrows(IllegalArgumentException.class, () -> a.malloc(-1));
        assertThrows(IllegalArgumentException.class, () -> a.malloc(Long.MIN_VALUE));
        assertThrows(IllegalArgumentException.class, () -> a.malloc(DataMemAllocator.MAX_BYTE_SIZE + 1));
        assertThrows(IllegalArgumentException.class, () -> a.malloc(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> a.calloc(-1, 8));
        assertThrows(IllegalArgumentException.class, () -> a.calloc(8, -1));
        assertThrows(IllegalArgumentException.class, () -> a.realloc(MemorySegment.NULL, 0, -5));
        assertThrows(IllegalArgumentException.class,
                () -> a.realloc(MemorySegment.NULL, 0, DataMemAllocator.MAX_BYTE_SIZE + 1));
        assertThrows(IllegalArgumentException.class, () -> a.free(MemorySegment.NULL, -1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.malloc(-42));
        assertTrue(e.getMessage().contains("-42"), "message names the size: " + e.getMessage());
    }

    @Test
    void exhaustionReturnsNullAndNeverThrows() {
        DataMemAllocator a = subject();
        long size = exhaustingSize();
        assertEquals(0, a.malloc(size).address(), "malloc(" + size + ") cannot succeed");
        assertEquals(0, a.calloc(size, 1).address(), "calloc(" + size + ", 1) cannot succeed");
        MemorySegment p = a.malloc(64);
        write(p, 0, pattern(7, 64));
        assertEquals(0, a.realloc(p, 64, size).address(), "realloc to " + size + " cannot succeed");
        assertArrayEquals(pattern(7, 64), read(p, 0, 64), "a failed realloc leaves the block untouched");
        a.free(p, 64);
    }

    @Test
    void freeOfNullIsANoOp() {
        subject().free(MemorySegment.NULL, 0);
        subject().free(MemorySegment.NULL, 123);
    }

    @Test
    void reallocGrowsAndShrinksKeepingDataAndAlignment() {
        DataMemAllocator a = subject();
        byte[] start = pattern(1, 100);
        MemorySegment p = a.malloc(100);
        write(p, 0, start);
        long[] steps = {1000, 4096, 1 << 20, (8 << 20) + 5, 3000, 50, 10};
        long size = 100;
        byte[] kept = start;
        for (long next : steps) {
            MemorySegment q = a.realloc(p, size, next);
            assertNotEquals(0, q.address(), "realloc " + size + " -> " + next);
            checkAligned(q, next);
            int keep = (int) Math.min(kept.length, next);
            byte[] expect = java.util.Arrays.copyOf(kept, keep);
            assertArrayEquals(expect, read(q, 0, keep), "data kept by realloc " + size + " -> " + next);
            if (next > keep) {
                write(q, next - 1, new byte[] {42}); // the new end is writable
            }
            p = q;
            size = next;
            kept = expect;
        }
        a.free(p, size);
    }

    @Test
    void reallocOfNullAllocatesAndReallocToZeroKeepsAUniqueBlock() {
        DataMemAllocator a = subject();
        MemorySegment p = a.realloc(MemorySegment.NULL, 0, 256);
        assertNotEquals(0, p.address());
        checkAligned(p, 256);
        checkWritable(p, 256, 3);
        MemorySegment q = a.realloc(p, 256, 0);
        assertNotEquals(0, q.address(), "realloc to 0 keeps a unique block (it does not free)");
        a.free(q, 0);
    }

    @Test
    void liveBlocksNeverOverlap() {
        DataMemAllocator a = subject();
        SplittableRandom r = new SplittableRandom(11);
        List<long[]> blocks = new ArrayList<>();
        List<MemorySegment> ptrs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            long size = r.nextInt(1, 3000);
            MemorySegment p = a.malloc(size);
            assertNotEquals(0, p.address());
            write(p, 0, filled((byte) i, (int) size));
            blocks.add(new long[] {p.address(), size, i});
            ptrs.add(p);
        }
        blocks.sort((x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < blocks.size(); i++) {
            assertTrue(blocks.get(i - 1)[0] + blocks.get(i - 1)[1] <= blocks.get(i)[0], "blocks overlap");
        }
        for (int i = 0; i < ptrs.size(); i++) {
            MemorySegment p = ptrs.get(i);
            long size = blocks.stream().filter(b -> b[0] == p.address()).findFirst().orElseThrow()[1];
            assertArrayEquals(filled((byte) i, (int) size), read(p, 0, (int) size), "block " + i + " intact");
            a.free(p, size);
        }
    }

    private static byte[] filled(byte value, int n) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, value);
        return b;
    }

    @Test
    void concurrentAllocationAndFreeKeepExactAccounting() throws Exception {
        CountingAllocator counting = new CountingAllocator(subject());
        int threads = threads();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            futures.add(pool.submit(() -> {
                start.await();
                SplittableRandom r = new SplittableRandom(seed);
                List<MemorySegment> live = new ArrayList<>();
                List<Long> sizes = new ArrayList<>();
                for (int i = 0; i < operationsPerThread(); i++) {
                    if (live.isEmpty() || r.nextInt(3) != 0) {
                        long size = r.nextInt(0, 20_000);
                        MemorySegment p = r.nextBoolean() ? counting.malloc(size) : counting.calloc(size, 1);
                        if (p.address() == 0) {
                            throw new AssertionError("allocation of " + size + " returned NULL");
                        }
                        if (size > 0) {
                            write(p, 0, new byte[] {(byte) seed});
                            write(p, size - 1, new byte[] {(byte) seed});
                        }
                        live.add(p);
                        sizes.add(size);
                    } else {
                        int k = r.nextInt(live.size());
                        MemorySegment p = live.remove(k);
                        long size = sizes.remove(k);
                        if (size > 0 && (read(p, 0, 1)[0] != (byte) seed || read(p, size - 1, 1)[0] != (byte) seed)) {
                            throw new AssertionError("block of " + size + " bytes was overwritten by another thread");
                        }
                        counting.free(p, size);
                    }
                }
                for (int i = 0; i < live.size(); i++) {
                    counting.free(live.get(i), sizes.get(i));
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES), "the worker threads ended");
        assertEquals(0, counting.liveBlocks(), "every block freed");
        assertEquals(0, counting.liveBytes(), "every byte freed");
        assertEquals(counting.allocations(), counting.frees());
    }

    @Test
    void blocksMayBeFreedOnAnotherThread() throws Exception {
        DataMemAllocator a = subject();
        ConcurrentLinkedQueue<long[]> handoff = new ConcurrentLinkedQueue<>();
        int count = 2000;
        Thread producer = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < count; i++) {
                long size = 16 + (i % 500);
                MemorySegment p = a.malloc(size);
                write(p, 0, new byte[] {(byte) i});
                handoff.add(new long[] {p.address(), size, i});
            }
        });
        int freed = 0;
        while (freed < count) {
            long[] b = handoff.poll();
            if (b == null) {
                Thread.onSpinWait();
                continue;
            }
            MemorySegment p = MemorySegment.ofAddress(b[0]);
            assertEquals((byte) b[2], read(p, 0, 1)[0]);
            a.free(p, b[1]);
            freed++;
        }
        producer.join();
    }

    @Test
    void arraysCaptureTheHandlerAndFreeThroughItWithTheirSize() {
        assumeHost();
        CountingAllocator counting = new CountingAllocator(subject());
        DataMemHandler h = DataMemHandler.of(handlerName(), counting);
        NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 100, 10));
        assertSame(h, a.handler());
        assertTrue(a.ownsData());
        assertEquals(0, a.address() % h.traits().byteAlignment());
        assertEquals(0.0, a.getDouble(99, 9));
        a.setDouble(2.5, 99, 9);
        a.resize(200, 10);                       // through h.realloc, whatever is bound now
        assertEquals(2.5, a.getDouble(99, 9));
        assertEquals(0.0, a.getDouble(199, 9), "new elements are zero");
        assertEquals(1, counting.liveBlocks());
        assertEquals(16000, counting.liveBytes());
        a.close();
        assertEquals(0, counting.liveBlocks());
        assertEquals(0, counting.liveBytes());
        NDArray empty = DataMem.callWith(h, () -> NDArray.empty(DType.INT32, 0, 5));
        assertEquals(0, empty.byteSize());
        empty.close();
        assertEquals(0, counting.liveBlocks());
    }

    @Test
    void arrayAllocationFailureNamesHandlerSizeAndAlignment() {
        CountingAllocator counting = new CountingAllocator(subject());
        DataMemHandler h = DataMemHandler.of(handlerName(), counting);
        long size = exhaustingSize();
        OutOfNativeMemoryException e = assertThrows(OutOfNativeMemoryException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, size)));
        assertEquals(handlerName(), e.handlerName());
        assertEquals(size, e.byteSize());
        assertEquals(h.traits().byteAlignment(), e.byteAlignment());
        assertTrue(e.getMessage().contains(handlerName()) && e.getMessage().contains(Long.toString(size)),
                e.getMessage());
        assertEquals(0, counting.liveBlocks(), "nothing allocated");
    }

    @Test
    void arenaAllocatesThroughTheHandlerAndFreesEverySegmentWithItsSize() {
        assumeHost();
        CountingAllocator counting = new CountingAllocator(subject());
        DataMemHandler h = DataMemHandler.of(handlerName(), counting);
        MemorySegment kept;
        try (Arena arena = h.openArena()) {
            MemorySegment s1 = arena.allocate(100);
            MemorySegment s2 = arena.allocate(1000, 4096);
            MemorySegment s3 = arena.allocateFrom(ValueLayout.JAVA_LONG, 1, 2, 3);
            assertEquals(0, s2.address() % 4096);
            assertEquals(1000, s2.byteSize());
            assertArrayEquals(new byte[1000], s2.toArray(ValueLayout.JAVA_BYTE), "arena memory is zeroed");
            s1.fill((byte) 1);
            assertEquals(3, s3.getAtIndex(ValueLayout.JAVA_LONG, 2));
            assertEquals(3, counting.liveBlocks());
            kept = s1;
        }
        assertEquals(0, counting.liveBlocks());
        assertEquals(0, counting.liveBytes());
        assertFalse(kept.scope().isAlive());
        assertThrows(IllegalStateException.class, () -> kept.get(ValueLayout.JAVA_BYTE, 0));
    }

    private void assumeHost() {
        MemoryTraits t = subject().traits();
        Assumptions.assumeTrue(t.hostAccessible(), () -> "skipped: " + handlerName() + " allocates " + t.kind()
                + " memory on " + t.device() + ", which has no host view");
    }
}
