package io.datamem.sycl;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The conformance suite against {@code pool(sycl:host)}, {@code pool(sycl:shared)} and
 * {@code pool(sycl:device)}, built by name. Device memory is written and read through the
 * upstream's queue; reallocations across size classes move device blocks with the backend's
 * {@code copyWithinDevice}. After each test every slab has gone back to the USM allocator.
 */
@Tag("sycl")
@ParameterizedClass(name = "pool(sycl:{0})")
@EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
class SyclPooledConformanceTest extends AllocatorConformanceTest {

    private final UsmKind kind;

    SyclPooledConformanceTest(UsmKind kind) {
        this.kind = kind;
    }

    @Override
    protected DataMemAllocator allocator() {
        SyclTests.assumeRuntime(kind);
        PoolingAllocator pool = assertInstanceOf(PoolingAllocator.class,
                DataMem.createHandler(handlerName()).allocator());
        assertInstanceOf(SyclUsmAllocator.class, pool.upstream());
        return pool;
    }

    @Override
    protected String handlerName() {
        return "pool(" + SyclTests.handlerName(kind) + ")";
    }

    @Override
    protected int operationsPerThread() {
        return kind == UsmKind.DEVICE ? 500 : 2000;
    }

    private SyclUsmAllocator upstream() {
        return (SyclUsmAllocator) ((PoolingAllocator) subject()).upstream();
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        if (kind.hostAccessible()) {
            super.write(ptr, offset, bytes);
            return;
        }
        upstream().queue().copy(MemorySegment.ofAddress(ptr.address() + offset), MemorySegment.ofArray(bytes),
                bytes.length);
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        if (kind.hostAccessible()) {
            return super.read(ptr, offset, length);
        }
        byte[] out = new byte[length];
        upstream().queue().copy(MemorySegment.ofArray(out), MemorySegment.ofAddress(ptr.address() + offset), length);
        return out;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        PoolingAllocator pool = (PoolingAllocator) allocator;
        assertEquals(0, pool.statistics().usedByteSize(), "no block of the pool is still handed out");
        pool.close();
        // Blocks cached by a live thread go back when it ends (the concurrency test shuts its
        // executor down without waiting for the threads to terminate): trim again until they have.
        for (int i = 0; i < 1000 && pool.statistics().runByteSize() > 0; i++) {
            LockSupport.parkNanos(10_000_000);
            pool.trim();
        }
        assertEquals(0, pool.statistics().runByteSize(), "every slab went back to the USM allocator");
        assertEquals(0, ((SyclUsmAllocator) pool.upstream()).trackedBlocks(),
                "no over-aligned or zero-size USM block is left");
    }
}
