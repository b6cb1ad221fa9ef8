package io.datamem.numpy;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Calls a native {@code PyDataMem_Handler} as C does: reads {@code ctx} and a function pointer from
 * the struct at each call and calls it through a downcall, with raw {@code size_t} values (a
 * negative long is a size_t of 2^63 or more).
 */
final class StructCalls {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MALLOC = LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle CALLOC =
            LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle REALLOC =
            LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle FREE = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG));

    private final MemorySegment struct;

    StructCalls(MemorySegment struct) {
        this.struct = MemorySegment.ofAddress(struct.address()).reinterpret(PyDataMem.HANDLER_LAYOUT.byteSize());
    }

    private MemorySegment field(String name) {
        return struct.get(ADDRESS, PyDataMem.HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator"),
                PathElement.groupElement(name)));
    }

    long malloc(long size) {
        try {
            return ((MemorySegment) MALLOC.invokeExact(field("malloc"), field("ctx"), size)).address();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    long calloc(long count, long elementSize) {
        try {
            return ((MemorySegment) CALLOC.invokeExact(field("calloc"), field("ctx"), count, elementSize)).address();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    long realloc(long ptr, long newSize) {
        try {
            return ((MemorySegment) REALLOC.invokeExact(field("realloc"), field("ctx"), MemorySegment.ofAddress(ptr),
                    newSize)).address();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    void free(long ptr, long size) {
        try {
            FREE.invokeExact(field("free"), field("ctx"), MemorySegment.ofAddress(ptr), size);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static MemorySegment bytes(long address, long size) {
        return MemorySegment.ofAddress(address).reinterpret(size);
    }
}
