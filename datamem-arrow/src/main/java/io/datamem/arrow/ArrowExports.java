package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.OutOfNativeMemoryException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The structs exported and not yet released, and the release callbacks every one of them carries:
 * FFM upcall stubs in the global arena, callable for the life of the JVM from any thread.
 *
 * <p>Each exported struct (a parent and each of its children) carries a token of its own in
 * {@code private_data}, never its address: a consumer may move a struct before releasing it, as
 * the specification allows. The structs of one export share a {@link Shared} whose resources (the
 * array's pin, a copy, the native block holding children and strings) go when the last of them
 * is released. A release removes its token exactly once; a second call, a call for a struct
 * already marked released, or a foreign struct, does nothing but log.
 */
final class ArrowExports {

    private static final System.Logger LOG = System.getLogger("io.datamem.arrow.ArrowCData");

    /** The resources of one export, freed when its last struct is released. */
    static final class Shared {
        private final AtomicInteger structs = new AtomicInteger();
        private final Runnable release;

        Shared(Runnable release) {
            this.release = release;
        }

        void retain() {
            structs.incrementAndGet();
        }

        void releaseOne() {
            if (structs.decrementAndGet() == 0) {
                release.run();
            }
        }
    }

    /** One exported struct: its export, and the addresses at which its children were written. */
    record Node(Shared shared, List<Long> children, boolean schema) {
    }

    private static final ConcurrentHashMap<Long, Node> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong TOKENS = new AtomicLong();
    private static final AtomicLong EXPORTS = new AtomicLong();

    /** {@code void (*release)(struct ArrowSchema*)}. */
    static final MemorySegment RELEASE_SCHEMA;
    /** {@code void (*release)(struct ArrowArray*)}. */
    static final MemorySegment RELEASE_ARRAY;

    static {
        try {
            MethodType type = MethodType.methodType(void.class, MemorySegment.class);
            RELEASE_SCHEMA = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(ArrowExports.class, "releaseSchema", type),
                    FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
            RELEASE_ARRAY = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(ArrowExports.class, "releaseArray", type),
                    FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ArrowExports() {
    }

    /**
     * Registers one struct of an export and returns the token to write into its
     * {@code private_data}.
     */
    static long register(Shared shared, List<Long> children, boolean schema) {
        long token = TOKENS.incrementAndGet();
        shared.retain();
        LIVE.put(token, new Node(shared, children, schema));
        return token;
    }

    /** Counts an export as outstanding until its shared resources go. */
    static Runnable counted(Runnable release) {
        EXPORTS.incrementAndGet();
        return () -> {
            try {
                release.run();
            } finally {
                EXPORTS.decrementAndGet();
            }
        };
    }

    static long outstanding() {
        return EXPORTS.get();
    }

    /** Native memory for the structs, buffer tables and strings of an export. */
    static MemorySegment malloc(long byteSize) {
        DataMemAllocator meta = DataMem.builtinDefault().allocator();
        MemorySegment raw = meta.malloc(byteSize);
        if (raw.address() == 0) {
            throw new OutOfNativeMemoryException(DataMem.builtinDefault().name(), byteSize, 16, "malloc");
        }
        MemorySegment m = raw.reinterpret(byteSize);
        m.fill((byte) 0);
        return m;
    }

    static void free(MemorySegment block) {
        DataMem.builtinDefault().allocator().free(MemorySegment.ofAddress(block.address()), block.byteSize());
    }

    /** The upcall for schemas. Nothing may escape it: an exception crossing into native code ends the JVM. */
    private static void releaseSchema(MemorySegment self) {
        release(self, true);
    }

    /** The upcall for arrays. Nothing may escape it. */
    private static void releaseArray(MemorySegment self) {
        release(self, false);
    }

    private static void release(MemorySegment self, boolean schema) {
        try {
            if (self.address() == 0) {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback called with NULL; ignored");
                return;
            }
            releaseStruct(self.address(), schema);
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback failed for 0x"
                        + Long.toHexString(self.address()), t);
            } catch (Throwable ignored) {
                // Nothing can be done: never let anything reach the native caller.
            }
        }
    }

    /**
     * Releases one struct: its children first (those not moved away, whose release is still set),
     * then marks it released and drops its share of the export.
     */
    static void releaseStruct(long address, boolean schema) {
        long size = schema ? ArrowCData.ARROW_SCHEMA.byteSize() : ArrowCData.ARROW_ARRAY.byteSize();
        long releaseOffset = schema ? 56 : 64;
        long privateOffset = schema ? 64 : 72;
        MemorySegment s = MemorySegment.ofAddress(address).reinterpret(size);
        if (s.get(JAVA_LONG, releaseOffset) == 0) {
            LOG.log(System.Logger.Level.WARNING, "datamem: Arrow release callback called for 0x"
                    + Long.toHexString(address) + ", already marked released; ignored");
            return;
        }
        long token = s.get(JAVA_LONG, privateOffset);
        Node node = LIVE.remove(token);
        if (node == null || node.schema() != schema) {
            if (node != null) {
                LIVE.put(token, node);
            }
            LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback called for 0x"
                    + Long.toHexString(address) + ", which is not a live " + (schema ? "ArrowSchema" : "ArrowArray")
                    + " datamem exported (a second call, or a foreign struct); ignored");
            return;
        }
        try {
            for (long child : node.children()) {
                MemorySegment c = MemorySegment.ofAddress(child).reinterpret(size);
                if (c.get(JAVA_LONG, releaseOffset) != 0) {   // not moved away by the consumer
                    releaseStruct(child, schema);
                }
            }
        } finally {
            s.set(ADDRESS, releaseOffset, MemorySegment.NULL);
            s.set(JAVA_LONG, privateOffset, 0);
            node.shared().releaseOne();
        }
    }
}
