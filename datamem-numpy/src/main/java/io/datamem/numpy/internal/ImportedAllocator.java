package io.datamem.numpy.internal;

import io.datamem.DataMemAllocator;
import io.datamem.MemoryTraits;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A native {@code PyDataMemAllocator} as a {@link DataMemAllocator}: each method checks its
 * arguments, then calls the struct's function with its {@code ctx}. The function pointers and
 * {@code ctx} are read once, when the struct is imported.
 */
public final class ImportedAllocator implements DataMemAllocator {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MALLOC = LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle CALLOC =
            LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle REALLOC =
            LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle FREE = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG));

    private final String name;
    private final long structAddress;
    private final HandlerStruct.Contents functions;
    private final MemoryTraits traits;

    /**
     * Wraps the functions of a struct read by {@link HandlerStruct#read}.
     *
     * @param structAddress where the struct was read, for messages
     * @param contents      what it held
     * @param traits        what its memory is, as the caller declares it
     */
    public ImportedAllocator(long structAddress, HandlerStruct.Contents contents, MemoryTraits traits) {
        this.name = contents.name();
        this.structAddress = structAddress;
        this.functions = contents;
        this.traits = Objects.requireNonNull(traits, "traits");
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        checkSize("byteSize", byteSize);
        try {
            return (MemorySegment) MALLOC.invokeExact(functions.malloc(), functions.ctx(), byteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        if (count < 0 || elementByteSize < 0) {
            throw new IllegalArgumentException("count: " + count + ", elementByteSize: " + elementByteSize
                    + " (expected: >= 0)");
        }
        long total = count * elementByteSize;
        if (Math.multiplyHigh(count, elementByteSize) != 0 || total < 0 || total > MAX_BYTE_SIZE) {
            return MemorySegment.NULL; // C's calloc would have to detect it; not every handler does
        }
        try {
            return (MemorySegment) CALLOC.invokeExact(functions.calloc(), functions.ctx(), count, elementByteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        checkSize("oldByteSize", oldByteSize);
        checkSize("newByteSize", newByteSize);
        try {
            return (MemorySegment) REALLOC.invokeExact(functions.realloc(), functions.ctx(),
                    MemorySegment.ofAddress(ptr.address()), newByteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        if (byteSize < 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0)");
        }
        if (ptr.address() == 0) {
            return;
        }
        try {
            FREE.invokeExact(functions.free(), functions.ctx(), MemorySegment.ofAddress(ptr.address()), byteSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public MemoryTraits traits() {
        return traits;
    }

    @Override
    public String toString() {
        return "PyDataMem_Handler[" + name + "] at 0x" + Long.toHexString(structAddress);
    }

    private static void checkSize(String what, long byteSize) {
        if (byteSize < 0 || byteSize > MAX_BYTE_SIZE) {
            throw new IllegalArgumentException(what + ": " + byteSize + " (expected: >= 0 and <= " + MAX_BYTE_SIZE
                    + ")");
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }
}
