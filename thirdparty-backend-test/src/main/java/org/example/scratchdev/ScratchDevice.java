package org.example.scratchdev;

import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.NDArray;
import org.example.scratchdev.internal.NativeHeap;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One scratch device: a pretend accelerator at {@code (kDLExtDev, ordinal)}. Its memory is host
 * memory from C's {@code aligned_alloc}, which it keeps in a table of live blocks and treats as
 * memory the host cannot touch: its allocators report it as {@link MemoryKind#DEVICE},
 * and data goes in and out only through the copies of this class (the backend's own API, as
 * {@code cudaMemcpy} is CUDA's) and of its {@link ScratchInterchange}.
 *
 * <p>The table makes every mistake a clear {@link IllegalArgumentException} rather than heap
 * corruption: a free with the wrong size, a second free, a pointer the device never handed out,
 * and a copy reaching outside a live block. A block may be freed through any allocator of its
 * device, on any thread.
 */
public final class ScratchDevice {

    /** The handler-name family of the scratch devices. */
    public static final String FAMILY = "scratchdev";

    /** How many scratch devices the pretend machine has: ordinals 0 to {@code COUNT - 1}. */
    public static final int COUNT = 4;

    /** The alignment of every block, as a GPU's allocator gives. */
    public static final long BYTE_ALIGNMENT = 256;

    /** The page size the scratch devices report for their memory. */
    public static final long PAGE_SIZE = 4096;

    private static final ScratchDevice[] DEVICES = new ScratchDevice[COUNT];

    static {
        for (int i = 0; i < COUNT; i++) {
            DEVICES[i] = new ScratchDevice(i);
        }
    }

    private final int ordinal;
    private final Device device;
    private final ConcurrentSkipListMap<Long, Long> blocks = new ConcurrentSkipListMap<>();
    private final AtomicLong liveBytes = new AtomicLong();
    private final ScratchInterchange interchange;

    private ScratchDevice(int ordinal) {
        this.ordinal = ordinal;
        this.device = new Device(DeviceType.EXT_DEV, ordinal);
        this.interchange = new ScratchInterchange(this);
    }

    /**
     * The scratch device with an ordinal. Nothing native is touched until memory is allocated.
     *
     * @param ordinal 0 to {@link #COUNT} - 1
     * @return the device
     * @throws IllegalArgumentException if there is no device with that ordinal
     */
    public static ScratchDevice of(int ordinal) {
        if (ordinal < 0 || ordinal >= COUNT) {
            throw new IllegalArgumentException("scratch device ordinal: " + ordinal + " (expected: 0 to "
                    + (COUNT - 1) + ")");
        }
        return DEVICES[ordinal];
    }

    /**
     * Whether a DLPack device is one of the scratch devices.
     *
     * @param device a device
     * @return true for {@code (kDLExtDev, N)} with N below {@link #COUNT}
     * @throws NullPointerException if {@code device} is null
     */
    public static boolean manages(Device device) {
        Objects.requireNonNull(device, "device");
        return device.type() == DeviceType.EXT_DEV && device.id() < COUNT;
    }

    /**
     * This device's ordinal.
     *
     * @return 0 to {@link #COUNT} - 1
     */
    public int ordinal() {
        return ordinal;
    }

    /**
     * This device as DLPack names it.
     *
     * @return {@code (kDLExtDev, ordinal)}
     */
    public Device device() {
        return device;
    }

    /**
     * This device's handler-name term.
     *
     * @return {@code scratchdev:N}
     */
    public String name() {
        return FAMILY + ":" + ordinal;
    }

    /**
     * This device's export hook, which the traits of its memory carry.
     *
     * @return the hook, one per device
     */
    public ScratchInterchange interchange() {
        return interchange;
    }

    /**
     * A new allocator of this device's memory.
     *
     * @param handlerName the name its error messages give, for example {@code scratchdev:1}
     * @return the allocator
     * @throws NullPointerException if {@code handlerName} is null
     */
    public ScratchAllocator allocator(String handlerName) {
        return new ScratchAllocator(this, Objects.requireNonNull(handlerName, "handlerName"));
    }

    /**
     * The traits of this device's memory.
     *
     * @return device memory on {@link #device()}, not host-accessible, aligned to
     *         {@link #BYTE_ALIGNMENT}, with this device's {@link #interchange()}
     */
    public MemoryTraits traits() {
        return new MemoryTraits(MemoryKind.DEVICE, device, false, BYTE_ALIGNMENT, PAGE_SIZE)
                .withInterchange(interchange);
    }

    /**
     * The blocks allocated on this device and not freed.
     *
     * @return a count
     */
    public long liveBlocks() {
        return blocks.size();
    }

    /**
     * The bytes of the blocks allocated on this device and not freed, as requested.
     *
     * @return bytes
     */
    public long liveBytes() {
        return liveBytes.get();
    }

    // ---------------------------------------------------------------------------------------------
    // Copies: the backend's own API

    /**
     * Copies host memory to this device, completing before it returns.
     *
     * @param source       host memory of at least {@code byteSize} bytes
     * @param target       a live block of this device, or a pointer inside one
     * @param targetOffset bytes from {@code target} to the first byte written
     * @param byteSize     the number of bytes
     * @throws NullPointerException     if {@code source} or {@code target} is null
     * @throws IllegalArgumentException if an offset or size is negative, {@code source} is smaller
     *                                  than {@code byteSize}, or the target range is not inside one
     *                                  live block of this device
     */
    public void copyFromHost(MemorySegment source, MemorySegment target, long targetOffset, long byteSize) {
        Objects.requireNonNull(source, "source");
        long to = checkRange("copyFromHost", target, targetOffset, byteSize);
        checkHost("copyFromHost", "source", source, byteSize);
        if (byteSize > 0) {
            MemorySegment.copy(source, 0, raw(to, byteSize), 0, byteSize);
        }
    }

    /**
     * Copies bytes of this device to host memory, completing before it returns.
     *
     * @param source       a live block of this device, or a pointer inside one
     * @param sourceOffset bytes from {@code source} to the first byte copied
     * @param target       host memory of at least {@code byteSize} bytes
     * @param byteSize     the number of bytes
     * @throws NullPointerException     if {@code source} or {@code target} is null
     * @throws IllegalArgumentException if an offset or size is negative, {@code target} is smaller
     *                                  than {@code byteSize}, or the source range is not inside one
     *                                  live block of this device
     */
    public void copyToHost(MemorySegment source, long sourceOffset, MemorySegment target, long byteSize) {
        Objects.requireNonNull(target, "target");
        long from = checkRange("copyToHost", source, sourceOffset, byteSize);
        checkHost("copyToHost", "target", target, byteSize);
        if (byteSize > 0) {
            MemorySegment.copy(raw(from, byteSize), 0, target, 0, byteSize);
        }
    }

    /**
     * Copies bytes between two ranges of this device, completing before it returns; the ranges may
     * overlap.
     *
     * @param source       a live block of this device, or a pointer inside one
     * @param sourceOffset bytes from {@code source} to the first byte copied
     * @param target       a live block of this device, or a pointer inside one
     * @param targetOffset bytes from {@code target} to the first byte written
     * @param byteSize     the number of bytes
     * @throws NullPointerException     if {@code source} or {@code target} is null
     * @throws IllegalArgumentException if an offset or size is negative, or a range is not inside
     *                                  one live block of this device
     */
    public void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                 long byteSize) {
        long from = checkRange("copyWithinDevice", source, sourceOffset, byteSize);
        long to = checkRange("copyWithinDevice", target, targetOffset, byteSize);
        if (byteSize > 0) {
            MemorySegment.copy(raw(from, byteSize), 0, raw(to, byteSize), 0, byteSize);
        }
    }

    /**
     * Copies host memory into a C-contiguous array on a scratch device, with the array pinned
     * ({@link NDArray#whileHeld}) so that it can be neither closed nor resized meanwhile.
     *
     * @param target an array whose memory is on a scratch device
     * @param source host memory of at least {@code target.byteSize()} bytes
     * @throws NullPointerException          if an argument is null
     * @throws IllegalStateException         if {@code target} is closed
     * @throws IllegalArgumentException      if {@code target} is not on a scratch device or not
     *                                       C-contiguous, or {@code source} is too small
     * @throws UnsupportedOperationException if {@code target} is read-only
     */
    public static void toDevice(NDArray target, MemorySegment source) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(source, "source");
        target.whileHeld(() -> {
            ScratchDevice d = deviceOf(target, "toDevice");
            if (target.isReadOnly()) {
                throw new UnsupportedOperationException(target + " is read-only");
            }
            d.copyFromHost(source, block(target), target.byteOffset(), target.byteSize());
            return null;
        });
    }

    /**
     * Copies a C-contiguous array on a scratch device into host memory, with the array pinned
     * ({@link NDArray#whileHeld}).
     *
     * @param source an array whose memory is on a scratch device
     * @param target host memory of at least {@code source.byteSize()} bytes
     * @throws NullPointerException     if an argument is null
     * @throws IllegalStateException    if {@code source} is closed
     * @throws IllegalArgumentException if {@code source} is not on a scratch device or not
     *                                  C-contiguous, or {@code target} is too small
     */
    public static void toHost(NDArray source, MemorySegment target) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(target, "target");
        source.whileHeld(() -> {
            deviceOf(source, "toHost").copyToHost(block(source), source.byteOffset(), target, source.byteSize());
            return null;
        });
    }

    private static ScratchDevice deviceOf(NDArray array, String operation) {
        if (!(array.traits().interchange() instanceof ScratchInterchange si)) {
            throw new IllegalArgumentException(operation + ": " + array + " is on " + array.traits().device()
                    + ", not on a scratch device (its traits carry no ScratchInterchange)");
        }
        if (!array.isCContiguous()) {
            throw new IllegalArgumentException(operation + ": " + array + " is not C-contiguous (expected: a"
                    + " C-contiguous array; copy() it first)");
        }
        return si.device();
    }

    private static MemorySegment block(NDArray array) {
        return MemorySegment.ofAddress(array.address() - array.byteOffset());
    }

    // ---------------------------------------------------------------------------------------------
    // The block table

    /** Allocates a block and records it; 0 when the C library has no memory for it. */
    long allocate(long byteSize, boolean zeroed) {
        // Zero bytes still get a unique block; sizes are rounded up to the alignment, as aligned_alloc asks.
        long nativeSize = (Math.max(byteSize, 1) + BYTE_ALIGNMENT - 1) & -BYTE_ALIGNMENT;
        long address = NativeHeap.alignedAlloc(BYTE_ALIGNMENT, nativeSize);
        if (address == 0) {
            return 0;
        }
        if (zeroed) {
            raw(address, nativeSize).fill((byte) 0);
        }
        Long previous = blocks.putIfAbsent(address, byteSize);
        if (previous != null) {
            throw new IllegalStateException(name() + ": the C library returned 0x" + Long.toHexString(address)
                    + ", which the table still holds as a live block of " + previous + " bytes");
        }
        liveBytes.addAndGet(byteSize);
        return address;
    }

    /**
     * Removes a block from the table if it is live with exactly this size; otherwise throws, saying
     * what is wrong, and changes nothing.
     */
    void claim(String handlerName, String call, long address, long byteSize) {
        if (blocks.remove(address, byteSize)) {
            liveBytes.addAndGet(-byteSize);
            return;
        }
        Long actual = blocks.get(address);
        if (actual != null) {
            throw new IllegalArgumentException("handler '" + handlerName + "': " + call + ": the block has "
                    + actual + " bytes, not " + byteSize + " (expected: the byte size it was allocated or last"
                    + " resized with)");
        }
        throw new IllegalArgumentException("handler '" + handlerName + "': " + call + ": 0x"
                + Long.toHexString(address) + " is not a live block of " + name() + " (" + whereIs(address)
                + "): freed already, or never allocated on this device");
    }

    /**
     * Whether an address lies in a live block of this device: what the provider asks before it
     * attaches this device's hook to imported memory.
     *
     * @param address an address
     * @return true if inside a live block (its end included)
     */
    public boolean holds(long address) {
        return owns(address);
    }

    /** Puts back a block {@link #claim} removed, when the operation it was claimed for failed. */
    void unclaim(long address, long byteSize) {
        blocks.put(address, byteSize);
        liveBytes.addAndGet(byteSize);
    }

    /** Frees the memory of a claimed block. */
    static void release(long address) {
        NativeHeap.free(address);
    }

    /** Copies the first bytes of one block to another, both live or claimed. */
    static void move(long from, long to, long byteSize) {
        if (byteSize > 0) {
            MemorySegment.copy(raw(from, byteSize), 0, raw(to, byteSize), 0, byteSize);
        }
    }

    /**
     * Whether an address lies in a live block (its end included, for zero-size blocks and ranges).
     *
     * @param address an address
     * @return true if inside a live block of this device
     */
    boolean owns(long address) {
        Map.Entry<Long, Long> e = blocks.floorEntry(address);
        return e != null && address - e.getKey() <= e.getValue();
    }

    /** The absolute start of a range, checked to lie inside one live block. */
    long checkRange(String operation, MemorySegment ptr, long offset, long byteSize) {
        Objects.requireNonNull(ptr, "ptr");
        if (offset < 0 || byteSize < 0) {
            throw new IllegalArgumentException(name() + ": " + operation + "(offset " + offset + ", " + byteSize
                    + " bytes): negative (expected: >= 0)");
        }
        long start = ptr.address() + offset;
        long end = start + byteSize;
        if (start < ptr.address() || end < start) {
            throw new IllegalArgumentException(name() + ": " + operation + " of " + byteSize + " bytes at 0x"
                    + Long.toHexString(ptr.address()) + " + " + offset + " overflows the address space");
        }
        Map.Entry<Long, Long> e = blocks.floorEntry(start);
        if (e == null || end - e.getKey() > e.getValue()) {
            throw new IllegalArgumentException(name() + ": " + operation + " of bytes [0x" + Long.toHexString(start)
                    + ", 0x" + Long.toHexString(end) + ") is not inside a live block of " + name() + " ("
                    + whereIs(start) + ")");
        }
        return start;
    }

    private String whereIs(long address) {
        Map.Entry<Long, Long> e = blocks.floorEntry(address);
        return e == null ? "no live block at or below it"
                : "the nearest live block below is 0x" + Long.toHexString(e.getKey()) + " of " + e.getValue() + " bytes";
    }

    private static void checkHost(String operation, String what, MemorySegment host, long byteSize) {
        if (host.byteSize() < byteSize) {
            throw new IllegalArgumentException(operation + ": the host " + what + " has " + host.byteSize()
                    + " bytes, fewer than the " + byteSize + " to copy");
        }
    }

    private static MemorySegment raw(long address, long byteSize) {
        return MemorySegment.ofAddress(address).reinterpret(byteSize);
    }

    /**
     * The largest size a block may have, as for every datamem allocator.
     *
     * @return {@link DataMemAllocator#MAX_BYTE_SIZE}
     */
    static long maxByteSize() {
        return DataMemAllocator.MAX_BYTE_SIZE;
    }

    @Override
    public String toString() {
        return "ScratchDevice[" + name() + ", " + liveBlocks() + " live blocks, " + liveBytes() + " bytes]";
    }
}
