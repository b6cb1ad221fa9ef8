package org.example.scratchdev;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;

/**
 * An allocator of a {@link ScratchDevice}'s memory: device memory on {@code (kDLExtDev, N)}, not
 * host-accessible, aligned to {@value ScratchDevice#BYTE_ALIGNMENT} bytes, whose traits carry the
 * device's {@link ScratchInterchange}. Made by the {@code scratchdev} provider
 * ({@code DataMem.handler("scratchdev:1")}) or by {@link ScratchDevice#allocator(String)}.
 *
 * <p>Follows {@link DataMemAllocator}'s contract: {@code NULL} on exhaustion, caller mistakes as
 * {@link IllegalArgumentException}s naming the handler and the sizes. Beyond it, {@code free} and
 * {@code realloc} check the block against the device's table: a wrong size, a block freed already
 * and a pointer the device never handed out are refused, and the memory is never freed twice.
 * Reallocation moves the block on the device, as a GPU allocator without {@code realloc} does.
 */
public final class ScratchAllocator implements DataMemAllocator {

    private final ScratchDevice device;
    private final String handlerName;
    private final MemoryTraits traits;

    ScratchAllocator(ScratchDevice device, String handlerName) {
        this.device = device;
        this.handlerName = handlerName;
        this.traits = device.traits();
    }

    /**
     * The device this allocator's memory is on.
     *
     * @return the device
     */
    public ScratchDevice device() {
        return device;
    }

    /**
     * The handler name the messages of this allocator give.
     *
     * @return for example {@code scratchdev:1}
     */
    public String handlerName() {
        return handlerName;
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        checkSize("malloc(" + byteSize + ")", "byteSize", byteSize);
        return segment(device.allocate(byteSize, false));
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        if (count < 0 || elementByteSize < 0) {
            throw new IllegalArgumentException("handler '" + handlerName + "': calloc(" + count + ", " + elementByteSize
                    + "): " + (count < 0 ? "count " + count : "elementByteSize " + elementByteSize)
                    + " is negative (expected: >= 0)");
        }
        long byteSize;
        try {
            byteSize = Math.multiplyExact(count, elementByteSize);
        } catch (ArithmeticException e) {
            return MemorySegment.NULL;   // the product overflows: no memory can hold it
        }
        if (byteSize > ScratchDevice.maxByteSize()) {
            return MemorySegment.NULL;
        }
        return segment(device.allocate(byteSize, true));
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        String call = "realloc(0x" + Long.toHexString(ptr.address()) + ", " + oldByteSize + ", " + newByteSize + ")";
        checkSize(call, "oldByteSize", oldByteSize);
        checkSize(call, "newByteSize", newByteSize);
        if (ptr.address() == 0) {
            if (oldByteSize != 0) {
                throw new IllegalArgumentException("handler '" + handlerName + "': " + call + ": oldByteSize "
                        + oldByteSize + " for NULL (expected: 0)");
            }
            return malloc(newByteSize);
        }
        long old = ptr.address();
        device.claim(handlerName, call, old, oldByteSize);
        long moved;
        try {
            moved = device.allocate(newByteSize, false);
        } catch (RuntimeException | Error e) {
            device.unclaim(old, oldByteSize);
            throw e;
        }
        if (moved == 0) {
            device.unclaim(old, oldByteSize);   // exhausted: the block stays the caller's, untouched
            return MemorySegment.NULL;
        }
        ScratchDevice.move(old, moved, Math.min(oldByteSize, newByteSize));
        ScratchDevice.release(old);
        return segment(moved);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        String call = "free(0x" + Long.toHexString(ptr.address()) + ", " + byteSize + ")";
        checkSize(call, "byteSize", byteSize);
        if (ptr.address() == 0) {
            return;
        }
        device.claim(handlerName, call, ptr.address(), byteSize);
        ScratchDevice.release(ptr.address());
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    private void checkSize(String call, String what, long byteSize) {
        if (byteSize < 0 || byteSize > ScratchDevice.maxByteSize()) {
            throw new IllegalArgumentException("handler '" + handlerName + "': " + call + ": " + what + " " + byteSize
                    + " (expected: 0 to " + ScratchDevice.maxByteSize() + ")");
        }
    }

    private static MemorySegment segment(long address) {
        return address == 0 ? MemorySegment.NULL : MemorySegment.ofAddress(address);
    }

    @Override
    public String toString() {
        return "ScratchAllocator[" + handlerName + " on " + device.name() + "]";
    }
}
