package io.datamem.impl.internal.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A thread's slabs: one current slab per class (the fast path allocates from it), a list per
 * class of other slabs with free blocks, a few spare wholly free slabs per class, and a stack of
 * slabs in which other threads freed blocks. Full slabs are on no list. Touched only by its
 * thread, except the remote stack; the heaps of ended threads and the virtual threads' heap are
 * touched under a lock that stands for the owner.
 */
final class Heap {

    /** {@link #remoteHead}: pushed onto by other threads with a compare-and-set, swapped out by the owner. */
    private static final VarHandle REMOTE_HEAD;

    static {
        try {
            REMOTE_HEAD = MethodHandles.lookup().findVarHandle(Heap.class, "remoteHead", Slab.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Thread thread;                        // null: the shared heap or the depot's
    final Slab[] current;
    final Slab[] available;
    final Slab[][] spares;                      // per class, made on first use
    final int[] spareCount;
    volatile Slab remoteHead;                   // REMOTE_HEAD
    int epoch;
    int ownedSlabs;
    Slab lastSlab;
    long allocations;

    Heap(Thread thread, int classes, int epoch) {
        this.thread = thread;
        this.current = new Slab[classes];
        this.available = new Slab[classes];
        this.spares = new Slab[classes][];
        this.spareCount = new int[classes];
        this.epoch = epoch;
    }

    /**
     * The fast path: the lowest free block of the heap's current slab of the class, by plain reads
     * and a release store of the slab's free bitmap (only the owner writes it); 0 if it has none.
     * Blocks set in the remote bitmap too (a free from another thread racing with the owner's own
     * free of the same block) are left for the collection to sort out.
     */
    long take(int c) {
        Slab s = current[c];
        if (s == null) {
            return 0;
        }
        long f = s.free;
        long usable = f & ~s.remote;
        if (usable == 0) {
            return 0;
        }
        long bit = usable & -usable;
        Slab.FREE.setRelease(s, f ^ bit);
        allocations++;
        return s.base + Long.numberOfTrailingZeros(bit) * s.blockSize;
    }

    /** Pushes a slab whose remote bitmap just stopped being empty on its owner's remote stack. */
    static void push(Heap owner, Slab s) {
        Slab head;
        do {
            head = owner.remoteHead;
            s.nextRemote = head;
        } while (!REMOTE_HEAD.compareAndSet(owner, head, s));
    }

    /**
     * Takes the heap's whole remote stack with one swap and hands each slab on it to {@code action},
     * its link cleared first (so the action may push it on another stack).
     */
    void forEachRemote(Consumer<Slab> action) {
        Slab s = (Slab) REMOTE_HEAD.getAndSet(this, (Slab) null);
        while (s != null) {
            Slab next = s.nextRemote;
            s.nextRemote = null;
            action.accept(s);
            s = next;
        }
    }

    void pushSpare(Slab s) {
        int c = s.classIndex;
        Slab[] stack = spares[c];
        if (stack == null || spareCount[c] == stack.length) {
            stack = Arrays.copyOf(stack == null ? new Slab[0] : stack, Math.max(1, spareCount[c] * 2));
            spares[c] = stack;
        }
        stack[spareCount[c]++] = s;
        s.spare = true;
    }

    Slab popSpare(int c) {
        Slab s = spares[c][--spareCount[c]];
        spares[c][spareCount[c]] = null;
        s.spare = false;
        return s;
    }

    void link(Slab s) {
        int c = s.classIndex;
        s.prevAvailable = null;
        s.nextAvailable = available[c];
        if (available[c] != null) {
            available[c].prevAvailable = s;
        }
        available[c] = s;
        s.listed = true;
    }

    void unlink(Slab s) {
        if (!s.listed) {
            return;
        }
        if (s.prevAvailable != null) {
            s.prevAvailable.nextAvailable = s.nextAvailable;
        } else {
            available[s.classIndex] = s.nextAvailable;
        }
        if (s.nextAvailable != null) {
            s.nextAvailable.prevAvailable = s.prevAvailable;
        }
        s.prevAvailable = null;
        s.nextAvailable = null;
        s.listed = false;
    }
}
