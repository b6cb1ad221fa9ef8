package io.datamem.ucx;

import io.datamem.array.NDArray;
import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/** The checks every UCX call site shares: statuses, segments, arrays. */
final class UcxChecks {

    private UcxChecks() {
    }

    /** Throws a {@link UcxException} naming the operation, the peer and the status unless it is OK. */
    static void check(int status, String operation, String peer, long byteSize) {
        if (status == UcpLayouts.UCS_OK) {
            return;
        }
        String text = status == UcxException.TIMED_OUT ? "timed out" : Ucp.statusString(status);
        throw new UcxException(operation, peer, status, operation + (peer == null ? "" : " with peer " + peer)
                + (byteSize > 0 ? " (" + byteSize + " bytes)" : "") + " failed: " + text + " (UCX status " + status
                + ")");
    }

    /** Refuses a heap or empty segment. */
    static void checkNative(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory");
        if (!memory.isNative()) {
            throw new IllegalArgumentException("memory: a heap segment (expected: native memory; UCX reaches only"
                    + " native memory without a copy)");
        }
        if (memory.byteSize() == 0) {
            throw new IllegalArgumentException("memory: 0 bytes at 0x" + Long.toHexString(memory.address())
                    + " (expected: at least one byte)");
        }
    }

    /** Runs {@code action} on a held C-contiguous array's segment. */
    static <T> T withArray(NDArray array, String what, java.util.function.Function<MemorySegment, T> action) {
        Objects.requireNonNull(array, "array");
        return array.whileHeld(() -> {
            if (!array.isCContiguous()) {
                throw new IllegalArgumentException("cannot " + what + " a non-C-contiguous array (shape "
                        + java.util.Arrays.toString(array.shape()) + ", strides " + java.util.Arrays.toString(
                        array.strides()) + "; expected: C-contiguous, copy it first)");
            }
            return action.apply(array.segment());
        });
    }
}
