package io.datamem.spi;

import io.datamem.Device;
import io.datamem.MemoryTraits;
import io.datamem.buffer.DeviceInfo;
import io.datamem.usm.SyclObject;
import io.datamem.usm.UsmKind;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a device backend tells datamem's export protocols about the memory its allocator hands
 * out, so that no exporter guesses: the buffer protocol's device id and {@code device_info},
 * DLPack's device, synchronisation with a DLPack consumer's stream, copies to the host, and for
 * SYCL the USM kind and {@code syclobj}.
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
     * The unique buffer-protocol device id of this backend's memory, naming its package.
     *
     * @return for example {@value DeviceInfo#CUDA_DEVICE_ID} or {@value DeviceInfo#SYCL_DEVICE_ID};
     *         never {@code "cpu"}, which the draft reserves
     */
    String bufferDeviceId();

    /**
     * The {@code device_info} of a buffer over a block.
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return a versioned record, for example {@link io.datamem.buffer.StandardDeviceInfo}
     */
    DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits);

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
        throw new UnsupportedOperationException(getClass().getName() + " (" + bufferDeviceId() + ") does not copy"
                + " within device memory");
    }

    /**
     * SYCL backends: the USM allocation type of a block ({@code sycl::get_pointer_type}).
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return the USM kind; by default the one the traits' memory kind stands for
     */
    default UsmKind usmKind(MemorySegment ptr, MemoryTraits traits) {
        return UsmKind.of(traits.kind());
    }

    /**
     * SYCL backends: the {@code syclobj} of a block's SYCL USM array interface (its queue or
     * context).
     *
     * @param ptr the block
     * @return the object, or empty for backends that are not SYCL (the default)
     */
    default Optional<SyclObject> syclObject(MemorySegment ptr) {
        return Optional.empty();
    }
}
