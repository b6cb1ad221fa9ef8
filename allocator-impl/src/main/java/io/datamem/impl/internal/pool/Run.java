package io.datamem.impl.internal.pool;

import io.datamem.MemoryTraits;

import java.util.BitSet;

/**
 * One upstream allocation carved into slots of one class's slab size. Guarded by the class's
 * depot lock.
 */
final class Run {
    final long base;
    final long slabBytes;
    final int slots;
    private final BitSet used;
    private int usedCount;

    final long end;
    final Slab[] slabs;                         // by slot; null where none is carved
    final int classIndex;                       // the class of every slab carved from it
    final MemoryTraits traits;                  // of every block carved from it (traitsOf)

    Run(long base, long slabBytes, int slots, int classIndex, MemoryTraits traits) {
        this.classIndex = classIndex;
        this.traits = traits;
        this.base = base;
        this.slabBytes = slabBytes;
        this.slots = slots;
        this.end = base + slabBytes * slots;
        this.slabs = new Slab[slots];
        this.used = new BitSet(slots);
    }

    /** The slab an address of this run lies in, or null if its slot holds none. */
    Slab find(long address) {
        return slabs[(int) ((address - base) / slabBytes)];
    }

    long byteSize() {
        return slabBytes * slots;
    }

    int take() {
        int slot = used.nextClearBit(0);
        used.set(slot);
        usedCount++;
        return slot;
    }

    void release(int slot) {
        used.clear(slot);
        usedCount--;
    }

    boolean full() {
        return usedCount == slots;
    }

    boolean empty() {
        return usedCount == 0;
    }
}
