package io.datamem.impl.placement;

import io.datamem.impl.os.LinuxMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs work on a fresh platform thread pinned to one CPU ({@code sched_setaffinity} of that thread
 * alone), so that what the kernel does "on the CPU that touches" or "local to the caller" is decided.
 */
final class PinnedThread {

    private static final MethodHandle SCHED_SETAFFINITY = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("sched_setaffinity").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    private PinnedThread() {
    }

    /**
     * Runs {@code work} on a new thread that runs on {@code cpu} only, and waits for it.
     *
     * @param cpu  the CPU's OS index
     * @param work what to run
     * @return what it returned
     * @throws IllegalStateException if the thread cannot be pinned there, or is not running there
     * @throws RuntimeException      what the work threw, wrapped when checked
     */
    static <T> T on(int cpu, Callable<T> work) {
        AtomicReference<T> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name("pinned-cpu-" + cpu).start(() -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment mask = arena.allocate(128);
                mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
                int r = (int) SCHED_SETAFFINITY.invokeExact(0, 128L, mask);
                if (r != 0) {
                    throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed");
                }
                if (LinuxMemory.currentCpu() != cpu) {
                    throw new IllegalStateException("pinned to CPU " + cpu + " but running on " + LinuxMemory.currentCpu());
                }
                result.set(work.call());
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the thread on CPU " + cpu, e);
        }
        Throwable f = failure.get();
        if (f instanceof RuntimeException r) {
            throw r;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) {
            throw new IllegalStateException(f);
        }
        return result.get();
    }
}
