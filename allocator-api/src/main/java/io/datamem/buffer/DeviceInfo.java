package io.datamem.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * The {@code device_info} of an extended buffer: what a consumer that knows the buffer's
 * {@link BufferView#device() device id} needs to use device memory (device ordinal, memory kind,
 * the stream or queue the data is ordered on, context handles).
 *
 * <p>Each device id defines its own {@code device_info}; the extended buffer protocol draft asks
 * that every definition carry a version so that it can grow. Implementations are immutable
 * records; consumers match on the type ({@code info instanceof StandardDeviceInfo s}) and check
 * {@link #version()}. Natively, {@link BufferView#toNative} points {@code device_info} at the
 * struct {@link #toNative(SegmentAllocator)} writes, whose first field is the version as a
 * {@code uint32_t}.
 */
public interface DeviceInfo {

    /** The device id of datamem's CUDA backend ({@code io.datamem.cuda}). */
    String CUDA_DEVICE_ID = "io.datamem.cuda";

    /** The device id of datamem's SYCL backend ({@code io.datamem.sycl}). */
    String SYCL_DEVICE_ID = "io.datamem.sycl";

    /**
     * The device id the draft reserves for a future definition by Python itself: no exporter may
     * use it.
     */
    String RESERVED_CPU_ID = "cpu";

    /**
     * The version of this definition: the value of the native struct's first field.
     *
     * @return the version, at least 1
     */
    int version();

    /**
     * Writes the native struct that {@code device_info} points to.
     *
     * @param allocator where to allocate it (and anything it points to)
     * @return the struct, starting with its {@code uint32_t} version
     */
    MemorySegment toNative(SegmentAllocator allocator);
}
