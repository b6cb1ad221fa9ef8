package io.datamem.impl.shared;

import io.datamem.array.NDArray;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Exports shared blocks as {@link IpcHandle}s and opens handles other processes (or this one)
 * exported. See {@code docs/ipc.md} for the handle format, the transports and the lifetime rules.
 *
 * <ul>
 *   <li>Exporter: {@link #handleOf(MemorySegment)} or {@link #handleOf(NDArray)} for memory of a
 *       {@code shared} handler or of {@code pool(shared)}: the mapping containing it is found by
 *       address, and its handle is made once per mapping (one {@code fstat}) and kept.</li>
 *   <li>Transport: {@link IpcSocket} sends a handle with its descriptor ({@code SCM_RIGHTS}); or
 *       the importer takes the descriptor itself with {@code pidfd_getfd} ({@link #open}), which
 *       needs ptrace permission over the exporter.</li>
 *   <li>Importer: {@link #open(IpcHandle)} returns an {@link ImportedMemory}. Opens are cached per
 *       mapping: opening any block of a mapping that is already mapped here only counts a
 *       reference (no system call); the last close unmaps. Before mapping anything, the importer
 *       checks that the descriptor is the memfd the handle names (its name carries the handle's
 *       random tag, its inode and size match, it is sealed against shrinking), so a forged or stale
 *       handle is an {@link IpcException}, never a mapping of other memory.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class SharedMemory {

    private SharedMemory() {
    }

    /**
     * The handle of a block of shared memory of this process.
     *
     * @param segment the block (its address and size); any part of a live block of a
     *                {@code shared} handler or of {@code pool(shared)}
     * @return its handle
     * @throws NullPointerException     if {@code segment} is null
     * @throws IllegalArgumentException if the segment does not lie inside one live shared mapping
     *                                  of this process
     */
    public static IpcHandle handleOf(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        return handleOf(segment.address(), segment.byteSize());
    }

    /**
     * The handle of a C-contiguous array's elements, taken while the array is pinned.
     *
     * @param array the array, on memory of a {@code shared} handler or of {@code pool(shared)}
     * @return the handle of its {@code byteSize()} bytes from element [0, ..., 0]
     * @throws NullPointerException     if {@code array} is null
     * @throws IllegalStateException    if the array is closed
     * @throws IllegalArgumentException if it is not C-contiguous or not on shared memory
     */
    public static IpcHandle handleOf(NDArray array) {
        Objects.requireNonNull(array, "array");
        return array.whileHeld(() -> {
            if (!array.isCContiguous()) {
                throw new IllegalArgumentException(array + ": not C-contiguous (expected: a C-contiguous array;"
                        + " export a copy)");
            }
            return handleOf(array.address(), array.byteSize());
        });
    }

    private static IpcHandle handleOf(long address, long byteSize) {
        Mapping m = Mapping.containing(address, byteSize);
        if (m == null) {
            throw new IllegalArgumentException("[0x" + Long.toHexString(address) + ", +" + byteSize + "): not inside"
                    + " a live shared mapping of this process (expected: memory of a 'shared' handler or of"
                    + " 'pool(shared)', not freed)");
        }
        return m.handle(address, byteSize);
    }

    /**
     * Opens a handle, taking the exporter's descriptor with {@code pidfd_getfd} unless its mapping
     * is already mapped here (then no system call is made).
     *
     * @param handle the handle
     * @return the block, mapped here
     * @throws NullPointerException     if {@code handle} is null
     * @throws IllegalArgumentException if the handle was read from the unsealed wire form
     *                                  ({@link IpcHandle#fromBytes(byte[])}), names another process
     *                                  and its mapping is not mapped here: nobody vouches for its
     *                                  process and descriptor, so the kernel is not asked (send it
     *                                  sealed: {@link IpcHandle#toBytes(javax.crypto.SecretKey)})
     * @throws IpcException         if the exporter is gone ({@code EXPORTER_GONE}), the kernel
     *                              refuses to hand over its descriptor ({@code NOT_PERMITTED}),
     *                              the exporter has no such mapping any more or the handle is
     *                              forged ({@code NO_SUCH_MAPPING}, {@code MISMATCH}), or mapping
     *                              fails ({@code SYSTEM}); nothing is mapped then
     */
    public static ImportedMemory open(IpcHandle handle) {
        Objects.requireNonNull(handle, "handle");
        Imports.Entry e = Imports.acquireCached(handle);
        if (e == null && handle.unsealedWire() && handle.exporterPid() != ProcessHandle.current().pid()) {
            throw new IllegalArgumentException("IPC handle refused: " + handle + " was read from the unsealed wire"
                    + " form and names process " + handle.exporterPid() + " (expected: a handle read with"
                    + " IpcHandle.fromBytes(bytes, key) from IpcHandle.toBytes(key), or received on an IpcSocket;"
                    + " an unsealed handle would let anyone make this process take another's descriptors)");
        }
        if (e == null) {
            Posix.requireLinux();
            int fd = Imports.takeDescriptor(handle);
            e = Imports.install(handle, fd, "descriptor " + handle.exporterFd() + " of process "
                    + handle.exporterPid());
        }
        return new ImportedMemory(handle, e);
    }

    /**
     * How many exported mappings are mapped into this process now (each counted once however
     * often it is open).
     *
     * @return the count
     */
    static int importedMappings() {
        return Imports.mapped();
    }

    /**
     * How many shared mappings this process exports now (live blocks of every {@code shared}
     * allocator).
     *
     * @return the count
     */
    static int exportedMappings() {
        return Mapping.LIVE.size();
    }
}
