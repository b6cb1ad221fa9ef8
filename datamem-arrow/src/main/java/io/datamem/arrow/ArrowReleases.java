package io.datamem.arrow;

import io.datamem.array.NDArray;
import io.datamem.buffer.BufferException;
import io.datamem.internal.ExportSlots;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Every release, both ways: the structs exported and not yet released, and the release callbacks
 * every one of them carries (FFM upcall stubs in the global arena, callable for the life of the
 * JVM from any thread); and the calls of producers' release callbacks, for imported arrays
 * ({@link Moved}, {@link Taken}) and for {@link ArrowCData#releaseArray} and
 * {@link ArrowCData#releaseSchema}.
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
final class ArrowReleases {

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
                        ArrowAbi.free(block);
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

    /** {@code void (*release)(struct ArrowSchema*)}. */
    static final MemorySegment RELEASE_SCHEMA;
    /** {@code void (*release)(struct ArrowArray*)}. */
    static final MemorySegment RELEASE_ARRAY;

    static {
        try {
            MethodType type = MethodType.methodType(void.class, MemorySegment.class);
            RELEASE_SCHEMA = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(ArrowReleases.class, "releaseSchema", type),
                    FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
            RELEASE_ARRAY = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(ArrowReleases.class, "releaseArray", type),
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

    /** The structs an import moved a producer's {@code ArrowArray} into (80 bytes each). */
    static final ExportSlots MOVED = new ExportSlots(80, 8, 256);

    /** {@code void (*release)(struct ArrowXxx*)}, the function pointer passed first. */
    static final MethodHandle CALL_RELEASE = Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    /**
     * What an imported array's allocator runs once when the import took over an {@code ArrowArray}
     * datamem exported (no move): the release by its token; and, for messages, what it releases.
     */
    static final class Taken implements Runnable, Supplier<String> {
        private final long token;

        Taken(long token) {
            this.token = token;
        }

        @Override
        public void run() {
            releaseToken(token);
        }

        @Override
        public String get() {
            return "the Arrow array it imported (one datamem exported), through its release";
        }
    }

    /**
     * What an imported array's allocator runs once: the release callback of the struct the
     * producer's {@code ArrowArray} was moved into, then gives that struct back; and, for messages,
     * what it releases. One object for both, made per import.
     */
    static final class Moved implements Runnable, Supplier<String> {
        private final MemorySegment struct;
        private final long token;   // the struct's slot in MOVED, or -1: malloc'd

        Moved(MemorySegment struct, long token) {
            this.struct = struct;
            this.token = token;
        }

        /** Gives the struct back without releasing what it holds (an import that failed). */
        void discard() {
            if (token != -1) {
                MOVED.release(token);
            } else {
                ArrowAbi.free(struct);
            }
        }

        @Override
        public void run() {
            try {
                callRelease(struct, ArrowAbi.A_RELEASE);
            } finally {
                discard();
            }
        }

        @Override
        public String get() {
            return "the Arrow array it imported, through the producer's release callback";
        }
    }

    /** Calls a struct's release callback if it is set (the callback marks it released). */
    static void callRelease(MemorySegment struct, long releaseOffset) {
        // Read as a long, not as an ADDRESS segment (see RELEASE_ARRAY_ADDRESS).
        long release = struct.get(JAVA_LONG, releaseOffset);
        if (release == 0) {
            return;
        }
        // A struct datamem exported, back in this JVM: the same function, without the crossing.
        if (release == RELEASE_ARRAY_ADDRESS) {
            releaseAt(struct.address(), false);
            return;
        }
        if (release == RELEASE_SCHEMA_ADDRESS) {
            releaseAt(struct.address(), true);
            return;
        }
        try {
            CALL_RELEASE.invokeExact(MemorySegment.ofAddress(release), MemorySegment.ofAddress(struct.address()));
        } catch (Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException(t);
        }
    }

    private ArrowReleases() {
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
        long releaseOffset = schema ? ArrowAbi.S_RELEASE : ArrowAbi.A_RELEASE;
        long privateOffset = schema ? ArrowAbi.S_PRIVATE : ArrowAbi.A_PRIVATE;
        MemorySegment s = ArrowAbi.RAW;
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
        long release = schema ? ArrowAbi.S_RELEASE : ArrowAbi.A_RELEASE;
        if (node.child() != 0 && ArrowAbi.RAW.get(JAVA_LONG, node.child() + release) != 0) {
            releaseStruct(node.child(), schema);
        }
    }

    /**
     * The token of the {@code ArrowArray} at {@code address} if it is one datamem exported and not
     * yet released (its {@code release} is ours and its token a live array's), else -1: what an
     * import of our own export checks to take the struct over instead of moving it.
     */
    static long liveArrayToken(long address) {
        if (ArrowAbi.RAW.get(JAVA_LONG, address + ArrowAbi.A_RELEASE) != RELEASE_ARRAY_ADDRESS) {
            return -1;
        }
        long token = ArrowAbi.RAW.get(JAVA_LONG, address + ArrowAbi.A_PRIVATE);
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
