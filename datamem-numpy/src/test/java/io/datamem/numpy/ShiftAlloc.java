package io.datamem.numpy;

import io.datamem.testing.NativeToolchain;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * NEP 49's sample handler ({@code native/nep49_shift_alloc.c}), compiled with gcc at test time
 * (skipped when gcc is missing, failed under CI) and loaded with FFM: its {@code new_handler}
 * struct and its counters.
 */
final class ShiftAlloc {

    private final SymbolLookup lookup;
    private final MethodHandle violations;
    private final MethodHandle liveBlocks;
    private final MethodHandle liveBytes;
    private final MethodHandle lastViolation;
    private final MethodHandle reset;

    private ShiftAlloc(SymbolLookup lookup) {
        this.lookup = lookup;
        Linker linker = Linker.nativeLinker();
        violations = linker.downcallHandle(lookup.findOrThrow("shift_violations"), FunctionDescriptor.of(JAVA_LONG));
        liveBlocks = linker.downcallHandle(lookup.findOrThrow("shift_live_blocks"), FunctionDescriptor.of(JAVA_LONG));
        liveBytes = linker.downcallHandle(lookup.findOrThrow("shift_live_bytes"), FunctionDescriptor.of(JAVA_LONG));
        lastViolation = linker.downcallHandle(lookup.findOrThrow("shift_last_violation"), FunctionDescriptor.of(ADDRESS));
        reset = linker.downcallHandle(lookup.findOrThrow("shift_reset"), FunctionDescriptor.ofVoid());
    }

    /**
     * Compiles and loads the sample, once per directory.
     *
     * @param dir where to build it
     * @return the loaded sample
     */
    static ShiftAlloc compile(Path dir) {
        Path so = NativeToolchain.compileSharedLibrary("native/nep49_shift_alloc.c", dir, List.of());
        return new ShiftAlloc(SymbolLookup.libraryLookup(so, Arena.global()));
    }

    /** The address of {@code PyDataMem_Handler new_handler}. */
    MemorySegment handlerStruct() {
        return lookup.findOrThrow("new_handler");
    }

    long violations() {
        return call(violations);
    }

    long liveBlocks() {
        return call(liveBlocks);
    }

    long liveBytes() {
        return call(liveBytes);
    }

    String lastViolation() {
        try {
            return ((MemorySegment) lastViolation.invokeExact()).reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static long call(MethodHandle h) {
        try {
            return (long) h.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
