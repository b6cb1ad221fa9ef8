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
 * generation). A 1-D export's schema and array share one slot, which holds their {@link Pair}:
 * the array's token is the slot's, the schema's the same with {@link #SCHEMA_TAG} set, and the
 * array's buffer table is the slot's 16-byte native block. Each struct of a tensor export has a
 * slot of its own holding its {@link Node}, and the structs of one side share a {@link Shared}
 * whose resources (the array's pin, a copy, the native block holding children and strings) go
 * when the last of them is released. A release takes its struct exactly once (its slot's
 * generation, or its bit of the pair); a second call, a call for a struct already marked
 * released, a stale or forged token, or a foreign struct, does nothing but log.
 */
final class ArrowExports {

    private static final System.Logger LOG = System.getLogger("io.datamem.arrow.ArrowCData");

    /**
     * One struct of a tensor export: its export side, the address at which its child was written
     * (0: none), and whether it is a schema.
     */
    static final class Node {
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
    static final class Shared {
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
        private final NDArray.Hold pin;
        private final NDArray copy;
        private final MemorySegment block;

        /**
         * @param structs how many structs share it (each releases it once)
         * @param pin     the array's pin, or null
         * @param copy    the copy exported, or null
         * @param block   the native block of children and strings, or null
         */
        Shared(int structs, NDArray.Hold pin, NDArray copy, MemorySegment block) {
            this.structs = structs;
            this.pin = pin;
            this.copy = copy;
            this.block = block;
        }

        void releaseOne() {
            if ((int) STRUCTS.getAndAdd(this, -1) == 1) {
                try {
                    Pair.drop(pin, copy);
                } finally {
                    if (block != null) {
                        free(block);
                    }
                }
            }
        }
    }

    /**
     * A 1-D export: its schema and its array in one slot, with a bit each in {@link #live} that
     * the struct's release clears exactly once (a compare-and-set). The array's release drops the
     * pin or copy, as when each struct had a slot of its own (a schema kept after its array does
     * not keep the array from closing); whichever release clears the last bit gives the slot back.
     * One slot and one object per export instead of two of each: a round trip takes and gives
     * back one slot, the free list's two compare-and-sets and the generation's one fewer than
     * with a slot per struct.
     *
     * <p>A release that read the slot's holder and lost a race to the struct's other release
     * cannot harm a later export that reuses the slot: the slot is free only once this pair's
     * bits are both clear, and a pair is never reused, so the stale release's compare-and-set
     * fails on its own pair.
     */
    static final class Pair {
        /** {@link #live}'s bit for the schema. */
        static final int SCHEMA = 1;
        /** {@link #live}'s bit for the array. */
        static final int ARRAY = 2;

        private static final VarHandle LIVE;

        static {
            try {
                LIVE = MethodHandles.lookup().findVarHandle(Pair.class, "live", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // through LIVE
        private volatile int live;
        private final NDArray.Hold pin;
        private final NDArray copy;

        /**
         * @param pin  the array's pin, or null
         * @param copy the copy exported, or null
         */
        Pair(NDArray.Hold pin, NDArray copy) {
            this.pin = pin;
            this.copy = copy;
            // A plain write, not a volatile one (a full fence on x86, a twentieth of the round
            // trip in a profile): the pair reaches a releasing thread only through its slot, whose
            // generation ExportSlots.acquire publishes after it, and a release reads that first.
            LIVE.set(this, SCHEMA | ARRAY);
        }

        /** Whether {@code part}'s struct is not released yet. */
        boolean isLive(int part) {
            return (live & part) != 0;
        }

        /** The structs not released yet (0, 1 or 2). */
        int liveStructs() {
            return Integer.bitCount(live);
        }

        /**
         * Clears {@code part}'s bit, once.
         *
         * @return the bits left, or -1 if {@code part} was released already
         */
        int take(int part) {
            for (;;) {
                int bits = live;
                if ((bits & part) == 0) {
                    return -1;
                }
                if (LIVE.compareAndSet(this, bits, bits & ~part)) {
                    return bits & ~part;
                }
            }
        }

        /** Drops what the array struct held: the pin (the array may close again), or the copy. */
        void free() {
            drop(pin, copy);
        }

        /** Closes {@code pin} (the array may close again) and {@code copy}, either of them null. */
        static void drop(NDArray.Hold pin, NDArray copy) {
            try {
                if (pin != null) {
                    pin.close();
                }
            } finally {
                if (copy != null) {
                    copy.close();
                }
            }
        }
    }

    /**
     * The bit that tells a pair's schema token from its array token. Slot indexes stay below
     * 2^30 ({@link ExportSlots} refuses tables of more slots), so the bit is never an index's,
     * and {@link ExportSlots#peek} refuses a tagged token as out of range: only the pair path,
     * which takes the tag off, accepts it.
     */
    static final long SCHEMA_TAG = 1L << 30;

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

    /**
     * The callbacks' addresses as plain longs: the hot paths store and compare {@code release}
     * fields as {@code JAVA_LONG}, so that no segment is made or unwrapped for a field that is
     * only compared. (A profile charged those accesses with a large share of the round trip, but
     * the share stayed with the {@code JAVA_LONG} accesses: it is the drain of the fences just
     * before them, which a sampling profile attributes to the next memory access.)
     */
    static final long RELEASE_SCHEMA_ADDRESS = RELEASE_SCHEMA.address();
    /** {@link #RELEASE_ARRAY}'s address. */
    static final long RELEASE_ARRAY_ADDRESS = RELEASE_ARRAY.address();

    private ArrowExports() {
    }

    /**
     * Registers one struct and returns the token to write into its {@code private_data}.
     *
     * @throws BufferException if a million structs are live already
     */
    static long register(Shared shared, long child, boolean schema) {
        long token = SLOTS.acquire(new Node(shared, child, schema));
        if (token == -1) {
            throw new BufferException("too many live Arrow exports: " + SLOTS.capacity() + " structs are not"
                    + " released yet (does the consumer call release?)");
        }
        return token;
    }

    /**
     * Registers a 1-D export's pair and returns its array's token; its schema's token is that
     * with {@link #SCHEMA_TAG}.
     *
     * @throws BufferException if a million structs are live already
     */
    static long registerPair(Pair pair) {
        long token = SLOTS.acquire(pair);
        if (token == -1) {
            throw new BufferException("too many live Arrow exports: " + SLOTS.capacity() + " slots are not"
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
        long[] pairs = new long[1];
        SLOTS.forEachLive(h -> {
            if (h instanceof Pair p) {
                pairs[0] += p.liveStructs();   // one side each, as a tensor's Shared
            } else {
                live.add(((Node) h).shared());
            }
        });
        return live.size() + pairs[0];
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
        Object holder = SLOTS.peek(token & ~SCHEMA_TAG);
        if (holder instanceof Pair pair) {
            int left = ((token & SCHEMA_TAG) != 0) == schema ? pair.take(schema ? Pair.SCHEMA : Pair.ARRAY) : -1;
            if (left == -1) {
                LOG.log(System.Logger.Level.ERROR, "datamem: Arrow release callback called for 0x"
                        + Long.toHexString(address) + ", which is not a live " + (schema ? "ArrowSchema" : "ArrowArray")
                        + " datamem exported (a second call, or a foreign struct); ignored");
                return;
            }
            s.set(JAVA_LONG, address + releaseOffset, 0);
            s.set(JAVA_LONG, address + privateOffset, 0);
            releasePart(token, pair, schema, left);
            return;
        }
        // A tagged token names a pair only: as a node's it is refused (peek finds no such index).
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

    /**
     * What the release of one struct of a pair does once it took the struct's bit: an array drops
     * the pin or copy; the last of the two gives the slot back ({@code left}: the bits left).
     */
    private static void releasePart(long token, Pair pair, boolean schema, int left) {
        try {
            if (!schema) {
                pair.free();
            }
        } finally {
            if (left == 0) {
                SLOTS.release(token & ~SCHEMA_TAG);   // ours alone: the pair's last bit was this caller's
            }
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
        if (RAW.get(JAVA_LONG, address + 64) != RELEASE_ARRAY_ADDRESS) {
            return -1;
        }
        long token = RAW.get(JAVA_LONG, address + 72);
        Object holder = SLOTS.peek(token);   // a tagged (schema) token finds nothing
        return holder instanceof Pair p && p.isLive(Pair.ARRAY) || holder instanceof Node n && !n.schema()
                ? token : -1;
    }

    /**
     * Releases an {@code ArrowArray} datamem exported by its token alone: what an import that took
     * the struct over runs once, where it would otherwise call the moved struct's release. Exactly
     * once with any release of a copy of the struct (the slot decides). Throws nothing.
     */
    static void releaseToken(long token) {
        try {
            Object holder = SLOTS.peek(token);
            if (holder instanceof Pair pair) {
                int left = pair.take(Pair.ARRAY);
                if (left == -1) {
                    LOG.log(System.Logger.Level.ERROR, "datamem: Arrow array taken over by an import was released"
                            + " already (its struct was released through a copy); ignored");
                } else {
                    releasePart(token, pair, false, left);
                }
                return;
            }
            Node node = holder instanceof Node n && !n.schema() && SLOTS.release(token) != null
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
