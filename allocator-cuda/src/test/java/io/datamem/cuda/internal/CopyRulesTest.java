package io.datamem.cuda.internal;

import io.datamem.cuda.internal.CudaRuntime.Side;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The copy rule the driver wrapper applies, without a GPU: when a "synchronous" {@code cuMemcpy}
 * returns before its data has arrived, so that the copy also waits for the stream.
 */
class CopyRulesTest {

    @Test
    void copiesThatReturnBeforeTheDataArrivedAreWaitedFor() {
        assertTrue(CudaRuntime.returnsEarly(Side.PAGEABLE, Side.DEVICE), "staged from pageable memory");
        assertTrue(CudaRuntime.returnsEarly(Side.DEVICE, Side.DEVICE), "device to device: no host synchronisation");
        assertFalse(CudaRuntime.returnsEarly(Side.PINNED, Side.DEVICE), "pinned to device is synchronous");
        assertFalse(CudaRuntime.returnsEarly(Side.DEVICE, Side.PAGEABLE), "device to host is synchronous");
        assertFalse(CudaRuntime.returnsEarly(Side.DEVICE, Side.PINNED));
        assertFalse(CudaRuntime.returnsEarly(Side.PAGEABLE, Side.PINNED));
    }
}
