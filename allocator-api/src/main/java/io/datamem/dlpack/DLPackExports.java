package io.datamem.dlpack;

import io.datamem.DataMemAllocator;
import io.datamem.array.NDArray;
import io.datamem.internal.ExportSlots;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The tensors exported and not yet deleted, and the deleter every one of them carries: an FFM
 * upcall stub in the global arena, so it stays callable for the life of the JVM, from any thread,
 * whether or not Java still references the array.
 *
 * <p>Each live export is held strongly here (its pin holds the array's memory, or it owns
 * a copy) until the consumer calls the deleter, which removes it exactly once: a second call for
 * the same tensor finds nothing and is logged, never a double release. A tensor of up to 11 axes
 * lives in a block of the export table {@link #SLOTS}, found from the deleter's {@code self} by
 * address arithmetic alone; a larger one in a malloc'd block and an entry of {@link #LIVE}.
 */
final class DLPackExports {

    private static final System.Logger LOG = System.getLogger("io.datamem.dlpack.DLPack");

    /** An exported tensor: what keeps its data alive, and its native struct. */
    record Export(long id, NDArray.Hold view, NDArray copy, DataMemAllocator metadataAllocator, long metadata,
                  long metadataByteSize) {

        void release() {
            try {
                if (view != null) {
                    view.close();
                }
            } finally {
                try {
                    if (copy != null) {
                        copy.close();
                    }
                } finally {
                    metadataAllocator.free(MemorySegment.ofAddress(metadata), metadataByteSize);
                }
            }
        }
    }

    /**
     * The size of the export table's blocks: a {@code DLManagedTensorVersioned} (80 bytes) with
     * shape and strides of up to 11 axes. Tensors of more axes get a block of their own (malloc)
     * and an entry in {@link #LIVE}.
     */
    static final long BLOCK_SIZE = 256;

    /**
     * The export table: each live tensor that fits in {@link #BLOCK_SIZE} is written into a slot's
     * block and holds there its pin (or its copy); the deleter finds the slot from {@code self}'s
     * address alone. Slabs of 256 blocks (64 KiB), at most 256 of them (65,536 live tensors).
     */
    static final ExportSlots SLOTS = new ExportSlots(BLOCK_SIZE, 8, 256);

    private static final ConcurrentHashMap<Long, Export> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();

    /** {@code void deleter(DLManagedTensor(Versioned) *self)}. */
    static final MemorySegment DELETER;

    static {
        try {
            DELETER = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(DLPackExports.class, "deleter",
                            MethodType.methodType(void.class, MemorySegment.class)),
                    FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private DLPackExports() {
    }

    static long nextId() {
        return IDS.incrementAndGet();
    }

    static void register(Export export) {
        LIVE.put(export.metadata(), export);
    }

    static long outstanding() {
        return LIVE.size() + SLOTS.live();
    }

    /** Releases what a tensor in the export table held: its pin, or its copy. */
    private static void release(Object holder) {
        if (holder instanceof NDArray.Hold pin) {
            pin.close();
        } else if (holder instanceof NDArray copy) {
            copy.close();
        }
    }

    /** The upcall. Nothing may escape it: an exception crossing into native code ends the JVM. */
    private static void deleter(MemorySegment self) {
        delete(self.address());
    }

    /**
     * What the deleter does, called by it and, for a tensor imported back into this JVM, directly
     * (the same function, without a downcall into an upcall). Throws nothing.
     */
    static void delete(long self) {
        try {
            long token = SLOTS.tokenAt(self);
            if (token != -1) {
                Object holder = SLOTS.release(token);
                if (holder != null) {
                    release(holder);
                    return;
                }
            }
            Export export = LIVE.remove(self);
            if (export == null) {
                LOG.log(System.Logger.Level.ERROR, "datamem: DLPack deleter called for 0x"
                        + Long.toHexString(self) + ", which is not a live tensor datamem exported"
                        + " (a second call, or a foreign pointer); ignored");
                return;
            }
            export.release();
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "datamem: DLPack deleter failed for 0x"
                        + Long.toHexString(self), t);
            } catch (Throwable ignored) {
                // Nothing can be done: never let anything reach the native caller.
            }
        }
    }
}
