package io.datamem.arrow;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.internal.ExportSlots;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The structs exported and not yet released, and the release callbacks every one of them carries:
 * FFM upcall stubs in the global arena, callable for the life of the JVM from any thread.
 *
 * <p>Each exported struct (a parent and each of its children) carries a token of its own in
 * {@code private_data}, never its address: a consumer may move a struct before releasing it, as
 * the specification allows. The token names a slot of an {@link ExportSlots} table (index and
 * generation), which holds the struct's {@link Node}; a 1-D array's buffer table is the slot's
 * 16-byte native block. The structs of one export share a {@link Shared} whose resources (the
 * array's pin, a copy, the native block holding children and strings) go when the last of them
 * is released. A release takes its slot exactly once; a second call, a call for a struct
 * already marked released, a stale or forged token, or a foreign struct, does nothing but log.
 */
final class ArrowExports {

    private static final System.Logger LOG = System.getLogger("io.datamem.arrow.ArrowCData");

    /**
     * One exported struct: its export side, the address at which its child was written (0: none),
     * and whether it is a schema. A struct without a child that is its side's only struct (a 1-D
     * export's schema and array) is registered as its {@link Shared} itself, one object less.
     */
    static class Node {
        private final Shared shared;
        private final long child;
        private final boolean schema;

        Node(Shared shared, long child, boolean schema) {
            this.shared = shared;
            this.child = child;
            this.schema = schema;
        }

        Shared shared() {
            return shared;
        }

        long child() {
            return child;
        }

        boolean schema() {
            return schema;
        }
    }

    /** The resources of one export side (schema or array), freed when its last struct is released. */
    static final class Shared extends Node {
        private static final VarHandle STRUCTS;

        static {
            try {
                STRUCTS = MethodHandles.lookup().findVarHandle(Shared.class, "structs", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // through STRUCTS
        private volatile int structs;
        private final NDArray.Pin pin;
        private final NDArray copy;
        private final MemorySegment block;

        /**
         * @param structs how many structs share it (each releases it once)
         * @param schema  whether it is a schema's side (what it is as a {@link Node})
         * @param pin     the array's pin, or null
         * @param copy    the copy exported, or null
         * @param block   the native block of children and strings, or null
         */
        Shared(int structs, boolean schema, NDArray.Pin pin, NDArray copy, MemorySegment block) {
            super(null, 0, schema);
            this.structs = structs;
            this.pin = pin;
            this.copy = copy;
            this.block = block;
        }

        @Override
        Shared shared() {
            return this;
        }

        void releaseOne() {
            if ((int) STRUCTS.getAndAdd(this, -1) == 1) {
                try {
                    if (pin != null) {
                        pin.close();
                    }
                    if (copy != null) {
                        copy.close();
                    }
                } finally {
                    if (block != null) {
                        free(block);
                    }
                }
            }
        }
    }

    /**
     * The live structs: slabs of 256 slots with a 16-byte block each (a 1-D array's buffer table),
     * at most 4,096 slabs (a million live structs).
     */
    static final ExportSlots SLOTS = new ExportSlots(16, 8, 4096);

    /**
     * All of memory as one segment, to read and write structs at raw addresses on the hot paths
     * without making a segment per access (a segment that escapes an un-inlined call is an
     * allocation). As unchecked as the {@code reinterpret} it replaces.
     */
    static final MemorySegment RAW = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /** The structs an import moved a producer's {@code ArrowArray} into (80 bytes each). */
    static final ExportSlots MOVED = new ExportSlots(80, 8, 256);

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
     * Registers one struct and returns the token to write into its {@code private_data}.
     *
     * @throws BufferException if a million structs are live already
     */
    static long register(Shared shared, long child, boolean schema) {
        long token = SLOTS.acquire(child == 0 && shared.schema() == schema && shared.structs == 1 ? shared
                : new Node(shared, child, schema));
        if (token == -1) {
            throw new BufferException("too many live Arrow exports: " + SLOTS.capacity() + " structs are not"
                    + " released yet (does the consumer call release?)");
        }
        return token;
    }

    /** Gives back a token {@link #register} returned, for an export that failed before it was handed out. */
    static void unregister(long token) {
        SLOTS.release(token);
    }

    /** The export sides whose resources are not released yet. */
    static long outstanding() {
        java.util.Set<Shared> live = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        SLOTS.forEachLive(h -> live.add(((Node) h).shared()));
        return live.size();
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

    /** What the callbacks do; called directly for structs datamem exported and imports back. Throws nothing. */
    static void release(MemorySegment self, boolean schema) {
        releaseAt(self.address(), schema);
    }

    /** {@link #release(MemorySegment, boolean)} of a struct at an address. Throws nothing. */
    static void releaseAt(long self, boolean schema) {
        try {
            if (self == 0) {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback called with NULL; ignored");
                return;
            }
            releaseStruct(self, schema);
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback failed for 0x"
                        + Long.toHexString(self), t);
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
        long releaseOffset = schema ? 56 : 64;
        long privateOffset = schema ? 64 : 72;
        MemorySegment s = RAW;
        if (s.get(JAVA_LONG, address + releaseOffset) == 0) {
            LOG.log(System.Logger.Level.WARNING, "datamem: Arrow release callback called for 0x"
                    + Long.toHexString(address) + ", already marked released; ignored");
            return;
        }
        long token = s.get(JAVA_LONG, address + privateOffset);
        Node node = SLOTS.peek(token) instanceof Node n && n.schema() == schema && SLOTS.release(token) != null
                ? n : null;
        if (node == null) {
            LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback called for 0x"
                    + Long.toHexString(address) + ", which is not a live " + (schema ? "ArrowSchema" : "ArrowArray")
                    + " datamem exported (a second call, or a foreign struct); ignored");
            return;
        }
        try {
            releaseChild(node, schema);
        } finally {
            s.set(JAVA_LONG, address + releaseOffset, 0);
            s.set(JAVA_LONG, address + privateOffset, 0);
            node.shared().releaseOne();
        }
    }

    /** Releases a node's child, unless the consumer moved it away (its release is then NULL here). */
    private static void releaseChild(Node node, boolean schema) {
        if (node.child() != 0 && RAW.get(JAVA_LONG, node.child() + (schema ? 56 : 64)) != 0) {
            releaseStruct(node.child(), schema);
        }
    }

    /**
     * The token of the {@code ArrowArray} at {@code address} if it is one datamem exported and not
     * yet released (its {@code release} is ours and its token a live array's), else -1: what an
     * import of our own export checks to take the struct over instead of moving it.
     */
    static long liveArrayToken(long address) {
        if (RAW.get(JAVA_LONG, address + 64) != RELEASE_ARRAY.address()) {
            return -1;
        }
        long token = RAW.get(JAVA_LONG, address + 72);
        return SLOTS.peek(token) instanceof Node n && !n.schema() ? token : -1;
    }

    /**
     * Releases an {@code ArrowArray} datamem exported by its token alone: what an import that took
     * the struct over runs once, where it would otherwise call the moved struct's release. Exactly
     * once with any release of a copy of the struct (the slot decides). Throws nothing.
     */
    static void releaseToken(long token) {
        try {
            Node node = SLOTS.peek(token) instanceof Node n && !n.schema() && SLOTS.release(token) != null
                    ? n : null;
            if (node == null) {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow array taken over by an import was released"
                        + " already (its struct was released through a copy); ignored");
                return;
            }
            try {
                releaseChild(node, false);
            } finally {
                node.shared().releaseOne();
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "datamem: release of an Arrow array taken over by an import"
                        + " failed", t);
            } catch (Throwable ignored) {
                // nothing may escape
            }
        }
    }
}
