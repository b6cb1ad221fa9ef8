package io.datamem.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The conformance suite's write and read hooks for memory the host cannot touch: copies through CUDA. */
final class GpuConformance {

    private GpuConformance() {
    }

    static void write(MemorySegment ptr, long offset, byte[] bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment source = arena.allocateFrom(ValueLayout.JAVA_BYTE, bytes);
            CudaMemory.copy(source, MemorySegment.ofAddress(ptr.address() + offset), bytes.length);
        }
    }

    static byte[] read(MemorySegment ptr, long offset, int length) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = arena.allocate(Math.max(length, 1));
            CudaMemory.copy(MemorySegment.ofAddress(ptr.address() + offset), target, length);
            return target.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
        }
    }
}
