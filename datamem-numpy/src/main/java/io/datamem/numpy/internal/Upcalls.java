package io.datamem.numpy.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The four upcall stubs every exported struct points to, and the registry their {@code ctx} finds
 * an export in.
 *
 * <p>The stubs are made once per process, in the global arena, and never freed: C may call them
 * for as long as it holds a struct, which no one can know in Java (an installed NumPy handler, a
 * capsule in an array). One set serves every export; the {@code ctx} of each struct is the id of
 * its export. An export is registered strongly while it is open or still has live blocks, so an
 * export dropped without {@code close()} stays reachable for C; once closed and empty it is
 * registered weakly, and calls through it after it was collected are stray calls: allocations
 * return {@code NULL}, frees are ignored, and {@link #strayCalls()} counts them.
 *
 * <p>No exception leaves an upcall (it would end the JVM): each entry point catches every
 * {@link Throwable}, counts it on its export, and returns {@code NULL}.
 */
public final class Upcalls {

    private static final ConcurrentHashMap<Long, Object> EXPORTS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);
    private static final AtomicLong STRAY_CALLS = new AtomicLong();

    /** {@code void *malloc(void *ctx, size_t size)}. */
    static final MemorySegment MALLOC = stub("malloc", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG),
            MethodType.methodType(MemorySegment.class, MemorySegment.class, long.class));
    /** {@code void *calloc(void *ctx, size_t nelem, size_t elsize)}. */
    static final MemorySegment CALLOC = stub("calloc", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG),
            MethodType.methodType(MemorySegment.class, MemorySegment.class, long.class, long.class));
    /** {@code void *realloc(void *ctx, void *ptr, size_t new_size)}. */
    static final MemorySegment REALLOC = stub("realloc",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG),
            MethodType.methodType(MemorySegment.class, MemorySegment.class, MemorySegment.class, long.class));
    /** {@code void free(void *ctx, void *ptr, size_t size)}. */
    static final MemorySegment FREE = stub("free", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG),
            MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class, long.class));

    private Upcalls() {
    }

    private static MemorySegment stub(String name, FunctionDescriptor descriptor, MethodType type) {
        try {
            MethodHandle target = MethodHandles.lookup().findStatic(Upcalls.class, name, type);
            return Linker.nativeLinker().upcallStub(target, descriptor, Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    static long nextId() {
        return NEXT_ID.getAndIncrement();
    }

    /**
     * {@link #EXPORTS}' entries of the ids below its length, as an array the upcalls index instead
     * of looking up a boxed key: copied on every change (exports are made and closed rarely), so a
     * reader sees a consistent array without a lock.
     */
    private static volatile Object[] byId = new Object[64];
    private static final int MAX_INDEXED_ID = 4096;

    static void register(Export export) {
        EXPORTS.values().removeIf(v -> v instanceof WeakReference<?> w && w.refersTo(null));
        put(export.id(), export);
    }

    static void strengthen(Export export) {
        put(export.id(), export);
    }

    static void weaken(Export export) {
        put(export.id(), new WeakReference<>(export));
    }

    private static synchronized void put(long id, Object entry) {
        EXPORTS.put(id, entry);
        if (id < MAX_INDEXED_ID) {
            Object[] table = byId;
            Object[] next = java.util.Arrays.copyOf(table, id < table.length ? table.length
                    : (int) Math.min(MAX_INDEXED_ID, Long.highestOneBit(id) << 1));
            for (int i = 0; i < next.length; i++) {   // drop collected exports, as EXPORTS did
                if (next[i] instanceof WeakReference<?> w && w.refersTo(null)) {
                    next[i] = null;
                }
            }
            next[(int) id] = entry;
            byId = next;
        }
    }

    /**
     * Calls through datamem's stubs whose {@code ctx} names no export still reachable: a closed
     * export collected since, or a {@code ctx} that datamem never wrote.
     *
     * @return the count, for the whole process
     */
    public static long strayCalls() {
        return STRAY_CALLS.get();
    }

    private static Export find(MemorySegment ctx) {
        long id = ctx.address();
        Object[] table = byId;
        Object o = id > 0 && id < table.length ? table[(int) id] : EXPORTS.get(id);
        if (o instanceof Export e) {
            return e;
        }
        if (o instanceof WeakReference<?> w && w.get() instanceof Export e) {
            return e;
        }
        STRAY_CALLS.incrementAndGet();
        return null;
    }

    // ---------------------------------------------------------------------------------------------
    // The entry points. Each catches everything: an exception leaving an upcall ends the JVM.

    private static MemorySegment malloc(MemorySegment ctx, long size) {
        Export e = null;
        try {
            e = find(ctx);
            return e == null ? MemorySegment.NULL : e.malloc(size);
        } catch (Throwable t) {
            return error(e, "malloc", t);
        }
    }

    private static MemorySegment calloc(MemorySegment ctx, long count, long elementSize) {
        Export e = null;
        try {
            e = find(ctx);
            return e == null ? MemorySegment.NULL : e.calloc(count, elementSize);
        } catch (Throwable t) {
            return error(e, "calloc", t);
        }
    }

    private static MemorySegment realloc(MemorySegment ctx, MemorySegment ptr, long newSize) {
        Export e = null;
        try {
            e = find(ctx);
            return e == null ? MemorySegment.NULL : e.realloc(ptr, newSize);
        } catch (Throwable t) {
            return error(e, "realloc", t);
        }
    }

    private static void free(MemorySegment ctx, MemorySegment ptr, long size) {
        Export e = null;
        try {
            e = find(ctx);
            if (e != null) {
                e.free(ptr, size);
            }
        } catch (Throwable t) {
            error(e, "free", t);
        }
    }

    private static MemorySegment error(Export e, String function, Throwable t) {
        try {
            if (e != null) {
                e.upcallError(function, t);
            } else {
                STRAY_CALLS.incrementAndGet();
            }
        } catch (Throwable ignored) {
            // nothing may escape an upcall
        }
        return MemorySegment.NULL;
    }
}
