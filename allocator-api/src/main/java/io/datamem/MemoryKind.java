package io.datamem;

/**
 * What kind of memory an allocator hands out, as far as code that reads or writes it cares.
 *
 * <p>The kind decides which exports are legal: host, pinned and managed memory may be exported as
 * CPU buffers; device memory may not.
 */
public enum MemoryKind {
    /** Ordinary pageable host memory (malloc, mmap). */
    HOST,
    /** Page-locked host memory a device can reach by DMA (CUDA pinned or registered, SYCL USM host). */
    HOST_PINNED,
    /** Memory on a device; the host cannot dereference it. */
    DEVICE,
    /** Memory that migrates between host and device on demand (CUDA managed, SYCL USM shared). */
    MANAGED;

    /**
     * Whether code running on the host may dereference memory of this kind.
     *
     * @return {@code false} for {@link #DEVICE}, {@code true} otherwise
     */
    public boolean hostAccessible() {
        return this != DEVICE;
    }
}
