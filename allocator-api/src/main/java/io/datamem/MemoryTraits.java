package io.datamem;

import java.util.Objects;
import java.util.Optional;

/**
 * What an allocator guarantees about the memory it returns: its kind, the device it lives on,
 * whether the host may touch it, the alignment of every block and the page size backing it.
 *
 * <p>Exports (buffers, DLPack, SYCL USM interfaces) read these traits; nothing guesses. An
 * allocator reports its traits through {@link DataMemAllocator#traits()}, and may refine them per
 * block through {@link DataMemAllocator#traitsOf(java.lang.foreign.MemorySegment)} (a huge-page
 * allocator that fell back to small pages, say).
 *
 * @param kind           the memory kind
 * @param device         the device the memory lives on ({@link Device#CPU} for host memory)
 * @param hostAccessible whether host code may dereference the memory
 * @param byteAlignment  the alignment every block is guaranteed to have, a power of two
 * @param pageSize       the size in bytes of the pages backing the memory, a power of two (the
 *                       system page size for ordinary memory)
 * @param interchange    what a device backend tells the export protocols about this memory
 *                       (buffer device id and {@code device_info}, DLPack device and stream
 *                       synchronisation, copies to the host, SYCL {@code syclobj}), or null for
 *                       memory exported as its other traits say (ordinary host memory)
 */
public record MemoryTraits(MemoryKind kind, Device device, boolean hostAccessible, long byteAlignment,
                           long pageSize, DeviceInterchange interchange) {

    /**
     * Validates the components; {@code interchange} may be null.
     *
     * @throws NullPointerException     if {@code kind} or {@code device} is null
     * @throws IllegalArgumentException if {@code byteAlignment} or {@code pageSize} is not a
     *                                  positive power of two, or if {@code hostAccessible} is true
     *                                  for {@link MemoryKind#DEVICE} memory
     */
    public MemoryTraits {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(device, "device");
        if (byteAlignment <= 0 || Long.bitCount(byteAlignment) != 1) {
            throw new IllegalArgumentException("byteAlignment: " + byteAlignment + " (expected: a power of two)");
        }
        if (pageSize <= 0 || Long.bitCount(pageSize) != 1) {
            throw new IllegalArgumentException("pageSize: " + pageSize + " (expected: a power of two)");
        }
        if (hostAccessible && kind == MemoryKind.DEVICE) {
            throw new IllegalArgumentException("hostAccessible: true (expected: false for DEVICE memory)");
        }
    }

    /**
     * Traits without a {@link DeviceInterchange} (the form every allocator used before device
     * backends could describe their exports).
     *
     * @param kind           the memory kind
     * @param device         the device the memory lives on
     * @param hostAccessible whether host code may dereference the memory
     * @param byteAlignment  the alignment every block is guaranteed to have, a power of two
     * @param pageSize       the page size backing the memory, a power of two
     * @throws NullPointerException     if {@code kind} or {@code device} is null
     * @throws IllegalArgumentException if {@code byteAlignment} or {@code pageSize} is not a
     *                                  positive power of two, or if {@code hostAccessible} is true
     *                                  for {@link MemoryKind#DEVICE} memory
     */
    public MemoryTraits(MemoryKind kind, Device device, boolean hostAccessible, long byteAlignment, long pageSize) {
        this(kind, device, hostAccessible, byteAlignment, pageSize, null);
    }

    /**
     * Traits of ordinary host memory with the given alignment, on pages of the system page size.
     *
     * @param byteAlignment the alignment every block has
     * @return host traits
     * @throws IllegalArgumentException if {@code byteAlignment} is not a positive power of two
     */
    public static MemoryTraits host(long byteAlignment) {
        return new MemoryTraits(MemoryKind.HOST, Device.CPU, true, byteAlignment,
                io.datamem.internal.Libc.pageSize());
    }

    /**
     * These traits with another alignment.
     *
     * @param newByteAlignment the alignment
     * @return a copy with {@code byteAlignment} replaced
     * @throws IllegalArgumentException if {@code newByteAlignment} is not a positive power of two
     */
    public MemoryTraits withByteAlignment(long newByteAlignment) {
        return new MemoryTraits(kind, device, hostAccessible, newByteAlignment, pageSize, interchange);
    }

    /**
     * These traits with another page size.
     *
     * @param newPageSize the page size
     * @return a copy with {@code pageSize} replaced
     * @throws IllegalArgumentException if {@code newPageSize} is not a positive power of two
     */
    public MemoryTraits withPageSize(long newPageSize) {
        return new MemoryTraits(kind, device, hostAccessible, byteAlignment, newPageSize, interchange);
    }

    /**
     * These traits with another kind, device and host accessibility (for allocators that move
     * host memory elsewhere, such as registering it with a device).
     *
     * @param newKind           the memory kind
     * @param newDevice         the device
     * @param newHostAccessible whether the host may dereference it
     * @return a copy with those components replaced
     * @throws NullPointerException     if {@code newKind} or {@code newDevice} is null
     * @throws IllegalArgumentException if {@code newHostAccessible} is true for device memory
     */
    public MemoryTraits withPlacement(MemoryKind newKind, Device newDevice, boolean newHostAccessible) {
        return new MemoryTraits(newKind, newDevice, newHostAccessible, byteAlignment, pageSize, interchange);
    }

    /**
     * These traits with a device backend's export hook.
     *
     * @param newInterchange the hook, or null to remove it
     * @return a copy with {@code interchange} replaced
     */
    public MemoryTraits withInterchange(DeviceInterchange newInterchange) {
        return new MemoryTraits(kind, device, hostAccessible, byteAlignment, pageSize, newInterchange);
    }

    /**
     * The hook of an export protocol for this memory, found by its type: what the backend's
     * {@link DeviceInterchange#hook(Class)} gives, or empty when these traits carry no interchange.
     * This is how export protocols (the buffer protocol's {@code BufferDeviceHook}, the USM array
     * interface's {@code UsmHook}, or a third party's) reach what a backend tells them, without
     * the core knowing them.
     *
     * @param type the hook's interface
     * @param <T>  the hook's type
     * @return the hook, or empty
     * @throws NullPointerException if {@code type} is null
     */
    public <T> Optional<T> hook(Class<T> type) {
        Objects.requireNonNull(type, "type");
        return interchange == null ? Optional.empty() : interchange.hook(type);
    }
}
