package io.datamem.jna;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.dlpack.DLPack;
import io.datamem.spi.ReleasingAllocator;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Memory JNA allocated, brought into datamem as C-contiguous arrays without copying: a JNA
 * {@link Memory}, or a buffer a native library bound with JNA returned. The array owns the memory:
 * closing it (or its collection, if it leaks) gives the memory back to its owner exactly once, the
 * {@code Memory} through {@link Memory#close()}, the library's buffer through the function given.
 * Its handler is {@value #HANDLER_NAME}; it cannot be resized (the owner's memory is not
 * datamem's to reallocate). If the import is refused, the memory stays the caller's.
 */
@SuppressWarnings("exports") // com.sun.jna types in the API: users of this class call JNA
public final class JnaArrays {

    /** The name of the handlers of imported arrays. */
    public static final String HANDLER_NAME = "jna";

    private JnaArrays() {
    }

    /**
     * An array over a JNA {@code Memory}, which the array then owns: closing the array closes
     * (frees) the {@code Memory}. Keep using the array, not the {@code Memory}, from then on.
     *
     * @param memory the memory; its size bounds the shape
     * @param dtype  the element type
     * @param shape  the length of each axis
     * @return the owning array, over {@code memory}'s address
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the shape is invalid or needs more bytes than the memory has
     * @throws IllegalStateException    if the memory was already closed
     */
    public static NDArray adopt(Memory memory, DType dtype, long... shape) {
        Objects.requireNonNull(memory, "memory");
        if (!memory.valid()) {
            throw new IllegalStateException("memory: " + memory + " was closed (expected: memory that is still"
                    + " allocated)");
        }
        return adopt(memory, memory.size(), m -> memory.close(), "JNA Memory " + memory + ", through its close()",
                dtype, shape);
    }

    /**
     * An array over a buffer a native library allocated (returned through a JNA binding), which the
     * array then owns: closing the array calls {@code free} once with {@code pointer}, from the
     * thread that closes it (or the cleaner's, if the array leaks).
     *
     * @param pointer   the buffer's start
     * @param byteSize  its size in bytes; it bounds the shape
     * @param free      gives the buffer back to the library (its free function); what it throws
     *                  propagates from the array's {@code close()}
     * @param dtype     the element type
     * @param shape     the length of each axis
     * @return the owning array, over {@code pointer}'s address
     * @throws NullPointerException     if an argument is null ({@code Pointer.NULL} is null in JNA)
     * @throws IllegalArgumentException if {@code pointer} is address 0 while the shape has elements,
     *                                  {@code byteSize} is negative, the shape is invalid or needs
     *                                  more than {@code byteSize} bytes
     */
    public static NDArray adopt(Pointer pointer, long byteSize, Consumer<? super Pointer> free, DType dtype,
                                long... shape) {
        Objects.requireNonNull(pointer, "pointer");
        Objects.requireNonNull(free, "free");
        return adopt(pointer, byteSize, free, "a native library's buffer " + pointer + ", through its free function",
                dtype, shape);
    }

    private static NDArray adopt(Pointer pointer, long byteSize, Consumer<? super Pointer> free, String what,
                                 DType dtype, long[] shape) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(shape, "shape");
        long address = Pointer.nativeValue(pointer);
        ReleasingAllocator owner = ReleasingAllocator.of(HANDLER_NAME, () -> what,
                DLPack.importTraits(Device.CPU, address), () -> free.accept(pointer));
        // Refused (a shape too large, say): the memory stays the caller's, and owner is never freed.
        return NDArray.adopt(new DataMemHandler(HANDLER_NAME, 1, owner), MemorySegment.ofAddress(address), byteSize,
                dtype, shape, null, 0);
    }
}
