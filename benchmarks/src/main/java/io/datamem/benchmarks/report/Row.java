package io.datamem.benchmarks.report;

import java.util.List;

/**
 * A row of the allocation tables.
 *
 * @param label     what the row measures
 * @param benchmark the JMH benchmark
 * @param handler   the {@code handler} parameter it must have, or null
 * @param javaPeer  whether it is one of the Java peers datamem's pool must beat
 */
record Row(String label, String benchmark, String handler, boolean javaPeer) {

    static final Row C = new Row("C: glibc malloc + free (the floor)", "AllocFreePeers.cMallocFree", null, false);
    static final Row C_GLIBC = new Row("C, own process: glibc", "CPeers.pair", "glibc", false);
    static final Row C_MIMALLOC = new Row("C, own process: mimalloc (LD_PRELOAD)", "CPeers.pair", "mimalloc", false);
    static final Row C_JEMALLOC = new Row("C, own process: jemalloc (LD_PRELOAD)", "CPeers.pair", "jemalloc", false);
    static final Row C_TCMALLOC = new Row("C, own process: tcmalloc (LD_PRELOAD)", "CPeers.pair", "tcmalloc", false);
    /** The C allocators measured in a process of their own ({@code dmbench-pairs}). */
    static final List<Row> C_ROWS = List.of(C_GLIBC, C_MIMALLOC, C_JEMALLOC, C_TCMALLOC);
    static final Row ARENA_CONFINED = new Row("Arena.ofConfined", "AllocFreePeers.arenaConfined", null, true);
    static final Row NETTY_POOLED = new Row("Netty pooled direct", "AllocFreePeers.nettyPooled", null, true);
    static final Row NETTY_ADAPTIVE = new Row("Netty adaptive direct", "AllocFreePeers.nettyAdaptive", null, true);
    static final Row JNA = new Row("JNA Native.malloc + free", "AllocFreePeers.jnaMallocFree", null, true);
    static final Row FFM = new Row("FFM: malloc + free downcalls", "AllocFreePeers.ffmMallocFree", null, false);
    static final Row DEFAULT = new Row("datamem: default_allocator", "AllocFreeDataMem.allocator", "default_allocator",
            false);
    static final Row ALIGNED = new Row("datamem: aligned64", "AllocFreeDataMem.allocator", "aligned64", false);
    static final Row POOL = new Row("datamem: pool(aligned64)", "AllocFreeDataMem.allocator", "pool(aligned64)", false);
    static final Row DEFAULT_LOOP = new Row("datamem: default_allocator, 1000 pairs per call as C",
            "AllocFreeLoop.loop", "default_allocator", false);
    /** The pool in the C baseline's shape: what goal (a) compares with the C loop. */
    static final Row POOL_LOOP = new Row("datamem: pool(aligned64), 1000 pairs per call as C", "AllocFreeLoop.loop",
            "pool(aligned64)", false);

    /** Every row of the allocation tables, in their order. */
    static final List<Row> ROWS = List.of(
            C, C_GLIBC, C_MIMALLOC, C_JEMALLOC, C_TCMALLOC, FFM, DEFAULT, ALIGNED, POOL, DEFAULT_LOOP, POOL_LOOP,
            new Row("NDArray empty + close: default_allocator", "AllocFreeDataMem.ndarray", "default_allocator", false),
            new Row("NDArray empty + close: aligned64", "AllocFreeDataMem.ndarray", "aligned64", false),
            new Row("NDArray empty + close: pool(aligned64)", "AllocFreeDataMem.ndarray", "pool(aligned64)", false),
            new Row("NDArray empty + write + close: pool(aligned64)", "NDArrayWritten.ndarray", "pool(aligned64)",
                    false),
            new Row("NDArray empty + confined() + write + close: pool(aligned64)", "NDArrayWritten.confined",
                    "pool(aligned64)", false),
            ARENA_CONFINED,
            new Row("Arena.ofShared", "AllocFreePeers.arenaShared", null, true),
            new Row("ByteBuffer.allocateDirect", "AllocFreePeers.byteBufferDirect", null, true),
            NETTY_POOLED, NETTY_ADAPTIVE, JNA);

    /** What goal (a) compares pool(aligned64) with at every size up to {@link Report#POOL_MAX_SIZE}. */
    static final List<Row> POOL_RIVALS = List.of(DEFAULT, ARENA_CONFINED, JNA, NETTY_POOLED, NETTY_ADAPTIVE);

    /** Whether a result is this row's: its benchmark, and its handler where the row names one. */
    boolean matches(Result r) {
        return r.benchmark().equals(benchmark) && (handler == null || handler.equals(r.param(paramName())));
    }

    /** The parameter {@link #handler} is matched against. */
    String paramName() {
        return benchmark.startsWith("CPeers.") ? "allocator" : "handler";
    }
}
