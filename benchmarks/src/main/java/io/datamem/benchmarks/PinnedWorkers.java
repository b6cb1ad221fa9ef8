package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Result;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JMH's worker threads, each pinned to one CPU: the suite runs every benchmark JVM with
 * {@code -Djmh.executor=CUSTOM -Djmh.executor.class=io.datamem.benchmarks.PinnedWorkers}.
 *
 * <p>Worker {@code i} runs on the {@code (first + i) % n}-th of the {@code n} CPUs the JVM may run
 * on, {@code first} being {@value #FIRST_CPU_PROPERTY} (0 unless set). So a 1-thread benchmark
 * always runs on the same CPU, and 2 threads on 2 CPUs run on the first two. On the 2-vCPU
 * machines the suite is run on, the two vCPUs do not run equally fast: a C loop of independent
 * integer operations, pinned, took 0.92–1.07 ns per iteration on the first and 1.21–1.29 ns on the
 * second (the host runs something else beside it). Left to the scheduler, a 1-thread fork landed on
 * either, and its result on which; a ratio of two 1-thread results compared the CPUs as much as the
 * code (see docs/decisions.md).
 *
 * <p>If the operating system cannot pin a thread (no {@code sched_setaffinity}, or the call fails),
 * the worker runs where the scheduler puts it, and the failure is recorded in the run's notes and
 * printed: the page then says its results are not pinned.
 */
public final class PinnedWorkers extends ThreadPoolExecutor {

    /** The system property naming the CPU (an index into the JVM's allowed CPUs) worker 0 runs on. */
    public static final String FIRST_CPU_PROPERTY = Result.FIRST_CPU;

    /** How the notes and the page name the runs that start on another CPU than the first. */
    static final String SECOND_CPU_LABEL = "1-thread baseline on the second CPU";

    /** The bytes of a {@code cpu_set_t}: 1,024 CPUs. */
    private static final int CPU_SET_BYTES = 128;

    private static final MethodHandle GET_AFFINITY;
    private static final MethodHandle SET_AFFINITY;

    static {
        Linker linker = Linker.nativeLinker();
        FunctionDescriptor affinity = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
        GET_AFFINITY = linker.defaultLookup().find("sched_getaffinity")
                .map(a -> linker.downcallHandle(a, affinity, Linker.Option.captureCallState("errno")))
                .orElse(null);
        SET_AFFINITY = linker.defaultLookup().find("sched_setaffinity")
                .map(a -> linker.downcallHandle(a, affinity, Linker.Option.captureCallState("errno")))
                .orElse(null);
    }

    /**
     * Creates the pool JMH runs its workers on (JMH calls this constructor by reflection).
     *
     * @param maxThreads the most workers at once
     * @param prefix     the prefix of the workers' names
     * @throws IllegalArgumentException if {@code maxThreads} is not positive, or
     *                                  {@value #FIRST_CPU_PROPERTY} is not a non-negative integer
     */
    public PinnedWorkers(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), factory(prefix));
    }

    private static ThreadFactory factory(String prefix) {
        int first = firstCpu();
        List<Integer> cpus = allowedCpus();
        if (!cpus.isEmpty()) {
            Notes.record("Pinning", "JMH's workers run pinned, worker k (from 0) on CPU "
                    + cpus.get(first % cpus.size()) + (cpus.size() > 1 ? " + k, modulo the CPUs " + cpus : "")
                    + (first == 0 ? "" : " (the " + SECOND_CPU_LABEL + ")"));
        }
        AtomicInteger created = new AtomicInteger();
        return task -> {
            int index = created.getAndIncrement();
            Thread t = new Thread(() -> {
                if (!cpus.isEmpty()) {
                    pin(cpus.get((first + index) % cpus.size()));
                }
                task.run();
            }, prefix + "-jmh-worker-" + (index + 1));
            t.setDaemon(true);
            return t;
        };
    }

    private static int firstCpu() {
        String v = System.getProperty(FIRST_CPU_PROPERTY, "0");
        try {
            int first = Integer.parseInt(v.trim());
            if (first < 0) {
                throw new NumberFormatException();
            }
            return first;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(FIRST_CPU_PROPERTY + "=" + v
                    + ": expected a non-negative integer (an index into the CPUs the JVM may run on)");
        }
    }

    /** The CPUs this process may run on, in order; empty (and noted) if they cannot be read. */
    static List<Integer> allowedCpus() {
        if (GET_AFFINITY == null || SET_AFFINITY == null) {
            unpinned("this C library has no sched_getaffinity/sched_setaffinity");
            return List.of();
        }
        try {
            Arena arena = Arena.ofAuto();   // not a confined arena: see pin
            MemorySegment set = arena.allocate(CPU_SET_BYTES);
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            int rc = (int) GET_AFFINITY.invokeExact(state, 0, (long) CPU_SET_BYTES, set);
            if (rc != 0) {
                unpinned("sched_getaffinity failed, errno " + errno(state));
                return List.of();
            }
            List<Integer> cpus = new ArrayList<>();
            for (int cpu = 0; cpu < CPU_SET_BYTES * 8; cpu++) {
                if ((set.get(ValueLayout.JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                    cpus.add(cpu);
                }
            }
            return cpus;
        } catch (Throwable e) {
            unpinned("sched_getaffinity: " + e);
            return List.of();
        }
    }

    /**
     * Pins the calling thread to one CPU; a failure is noted and the thread runs unpinned. Through
     * an automatic arena, whose segments have no owner thread: a confined arena's accesses put an
     * owner-thread test into the JDK's shared profile of every segment access, and the benchmarks'
     * loops compiled it in (docs/decisions.md, "Both kinds of memory in the accessors' profile").
     */
    static void pin(int cpu) {
        try {
            Arena arena = Arena.ofAuto();
            MemorySegment set = arena.allocate(CPU_SET_BYTES);
            set.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            int rc = (int) SET_AFFINITY.invokeExact(state, 0, (long) CPU_SET_BYTES, set);
            if (rc != 0) {
                unpinned("sched_setaffinity(CPU " + cpu + ") failed, errno " + errno(state));
            }
        } catch (Throwable e) {
            unpinned("sched_setaffinity(CPU " + cpu + "): " + e);
        }
    }

    private static int errno(MemorySegment state) {
        return state.get(ValueLayout.JAVA_INT,
                Linker.Option.captureStateLayout().byteOffset(java.lang.foreign.MemoryLayout.PathElement
                        .groupElement("errno")));
    }

    private static void unpinned(String why) {
        String message = "JMH's workers are not pinned to CPUs: " + why;
        System.err.println("# datamem suite: " + message);
        Notes.record("Pinning", message);
    }
}
