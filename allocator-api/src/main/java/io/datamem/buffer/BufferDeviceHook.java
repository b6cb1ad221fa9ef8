package io.datamem.buffer;

import io.datamem.DeviceInterchange;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;

/**
 * What the buffer protocol needs from a device backend to export its memory: the device id that
 * names the backend and the {@code device_info} of a block. A backend's
 * {@link DeviceInterchange} implements it (or returns it from {@link DeviceInterchange#hook(Class)});
 * {@code NDArray.getBuffer} finds it through {@link MemoryTraits#hook(Class)}, and refuses a
 * buffer of device memory whose backend serves none.
 *
 * <p>Implementations are thread-safe and fast: every buffer request over device memory calls them.
 */
public interface BufferDeviceHook {

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
     * @param ptr    the block: the start of a live block of the backend's, or one inside it (a
     *               pool's block in its slab, an imported tensor's lowest element)
     * @param traits the block's traits
     * @return a versioned record, for example {@link StandardDeviceInfo}
     * @throws BufferException if the backend cannot describe the block (it is not its memory)
     */
    DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits);
}
