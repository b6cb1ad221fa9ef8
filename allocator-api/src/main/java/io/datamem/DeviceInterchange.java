package io.datamem;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a device backend tells datamem about the memory its allocator hands out, so that no
 * exporter guesses: the memory's DLPack device, synchronisation with a consumer's stream, copies
 * to the host and within the device; and, through {@link #hook(Class)}, what each export protocol
 * needs beyond that. The hooks of the protocols live in their own packages
 * ({@code io.datamem.buffer.BufferDeviceHook}: the buffer protocol's device id and
 * {@code device_info}; {@code io.datamem.usm.UsmHook}: the SYCL USM kind and {@code syclobj}),
 * so that this core interface names none of them: a backend implements this interface and the
 * hooks it serves, and a new protocol adds a hook without a change here.
 *
 * <p>A backend attaches its implementation to the traits its allocator reports
 * ({@link MemoryTraits#withInterchange(DeviceInterchange)}); adaptors forward traits, so the hook
 * reaches exports through any stack of adaptors. Memory whose traits carry no interchange is
 * exported as what its traits say, and device memory without one cannot be exported.
 *
 * <p>Every {@code ptr} argument is the start of a live block (as a zero-length segment): one the
 * backend's allocator returned, or, through a pool or a DLPack import, a block inside one (a
 * pool's block in its slab, an imported tensor's lowest element). Implementations are thread-safe
 * and fast: exports call them on every request.
 */
public interface DeviceInterchange {

    /**
     * The DLPack device of a block: {@code __dlpack_device__}.
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return the device type and ordinal, for example {@code (CUDA, 1)}
     */
    default Device dlpackDevice(MemorySegment ptr, MemoryTraits traits) {
        return traits.device();
    }

    /**
     * Makes the data of a block ready for a DLPack consumer's stream, as {@code __dlpack__(stream=...)}
     * requires of producers: the consumer will use the data on {@code consumerStream}, so work
     * writing it must be ordered before (for example by recording an event on the producer's
     * stream and making the consumer's stream wait for it). Not called when the consumer passed
     * -1 (no synchronisation).
     *
     * @param ptr            the block
     * @param consumerStream the consumer's stream as DLPack encodes it for this device type (for
     *                       CUDA: 1 legacy default stream, 2 per-thread default stream, otherwise a
     *                       {@code cudaStream_t}), or empty when the consumer passed none (DLPack's
     *                       {@code None}: the device's default)
     * @throws IllegalArgumentException if the stream value is not valid for this device type (for
     *                                  example 0 for CUDA)
     * @throws io.datamem.BackendException if the device runtime fails
     */
    void synchronize(MemorySegment ptr, OptionalLong consumerStream);

    /**
     * Copies bytes of a block to host memory, completing before it returns: DLPack's
     * {@code copy=True} to the CPU, and every other export that needs the data on the host.
     *
     * @param ptr        the block
     * @param byteOffset the offset of the first byte to copy, from {@code ptr}
     * @param target     host memory of at least {@code byteSize} bytes
     * @param byteSize   the number of bytes
     * @throws io.datamem.BackendException if the device runtime fails
     */
    void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize);

    /**
     * Copies bytes between two ranges of this backend's memory on the device (device to device),
     * completing before it returns: what a pool ({@code PoolingAllocator}) needs to move a block
     * the host cannot touch when it reallocates across size classes. Unlike the other methods,
     * {@code source} and {@code target} may be blocks carved out of the backend's blocks (a pool's
     * blocks inside its slabs).
     *
     * @param source       the block copied from
     * @param sourceOffset the offset of the first byte to copy, from {@code source}
     * @param target       the block copied to
     * @param targetOffset the offset of the first byte written, from {@code target}
     * @param byteSize     the number of bytes
     * @throws UnsupportedOperationException if the backend cannot copy on the device (the default)
     * @throws io.datamem.BackendException  if the device runtime fails
     */
    default void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                  long byteSize) {
        throw new UnsupportedOperationException(getClass().getName() + " does not copy within device memory");
    }

    /**
     * The hook of an export protocol, found by its type: by default this object when it
     * implements {@code type}, else empty. A backend that serves a protocol through another object
     * overrides this. Exporters reach it through {@link MemoryTraits#hook(Class)}.
     *
     * @param type the hook's interface, for example {@code io.datamem.buffer.BufferDeviceHook}
     * @param <T>  the hook's type
     * @return the hook, or empty when this backend does not serve the protocol
     * @throws NullPointerException if {@code type} is null
     */
    default <T> Optional<T> hook(Class<T> type) {
        Objects.requireNonNull(type, "type");
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }
}
