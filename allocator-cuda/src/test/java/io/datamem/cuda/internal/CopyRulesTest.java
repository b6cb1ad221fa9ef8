package io.datamem.cuda.internal;

import io.datamem.cuda.internal.CudaRuntime.Alloc;
import io.datamem.cuda.internal.CudaRuntime.Side;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules the runtime wrapper applies around JCuda, without a GPU: copy directions (JCuda's
 * {@code cudaMemcpy} accepts only the four explicit ones), when a "synchronous" {@code cudaMemcpy}
 * returns early, and which allocations bypass JCuda's 2 GiB {@code ByteBuffer} limit.
 */
class CopyRulesTest {

    @Test
    void directions() {
        assertEquals(0, CudaRuntime.memcpyKind(Side.PAGEABLE, Side.PINNED), "cudaMemcpyHostToHost");
        assertEquals(1, CudaRuntime.memcpyKind(Side.PINNED, Side.DEVICE), "cudaMemcpyHostToDevice");
        assertEquals(1, CudaRuntime.memcpyKind(Side.PAGEABLE, Side.DEVICE));
        assertEquals(2, CudaRuntime.memcpyKind(Side.DEVICE, Side.PAGEABLE), "cudaMemcpyDeviceToHost");
        assertEquals(3, CudaRuntime.memcpyKind(Side.DEVICE, Side.DEVICE), "cudaMemcpyDeviceToDevice");
    }

    @Test
    void copiesThatReturnBeforeTheDataArrivedAreWaitedFor() {
        assertTrue(CudaRuntime.returnsEarly(Side.PAGEABLE, Side.DEVICE), "staged from pageable memory");
        assertTrue(CudaRuntime.returnsEarly(Side.DEVICE, Side.DEVICE), "device to device: no host synchronisation");
        assertFalse(CudaRuntime.returnsEarly(Side.PINNED, Side.DEVICE), "pinned to device is synchronous");
        assertFalse(CudaRuntime.returnsEarly(Side.DEVICE, Side.PAGEABLE), "device to host is synchronous");
        assertFalse(CudaRuntime.returnsEarly(Side.DEVICE, Side.PINNED));
        assertFalse(CudaRuntime.returnsEarly(Side.PAGEABLE, Side.PINNED));
    }

    @Test
    void blocksJCudaCannotWrapGoToTheDriver() {
        long big = Integer.MAX_VALUE + 1L;
        assertTrue(CudaRuntime.viaDriver(Alloc.HOST, big, 0));
        assertFalse(CudaRuntime.viaDriver(Alloc.HOST, Integer.MAX_VALUE, 0));
        assertTrue(CudaRuntime.viaDriver(Alloc.MANAGED, big, 2), "host-attached managed memory gets a ByteBuffer");
        assertFalse(CudaRuntime.viaDriver(Alloc.MANAGED, big, 1), "globally attached: no ByteBuffer");
        assertFalse(CudaRuntime.viaDriver(Alloc.DEVICE, 1L << 40, 0));
    }
}
