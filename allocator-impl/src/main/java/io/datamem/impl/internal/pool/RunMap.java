package io.datamem.impl.internal.pool;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds the run, and so the slab, an address lies in, without a lock: a two-level table of
 * granules (a power of two no longer than any run), each granule holding the run that covers
 * its first byte and the run that starts inside it (runs are at least a granule long, so there
 * is at most one of each). Adding or removing a run writes its granules' entries under the
 * pool's index lock: no copy of the whole index, so runs can come and go often.
 */
final class RunMap {
    private static final int LEAF_BITS = 14;
    private static final int LEAF_MASK = (1 << LEAF_BITS) - 1;

    /** One leaf: {@code 2^LEAF_BITS} consecutive granules. */
    private static final class Leaf {
        final long key;
        final Run[] covering = new Run[1 << LEAF_BITS];
        final Run[] starting = new Run[1 << LEAF_BITS];

        Leaf(long key) {
            this.key = key;
        }
    }

    private final int shift;
    private volatile Leaf[] leaves = new Leaf[0];   // sorted by key; replaced when one is added
    private final Set<Run> runs = ConcurrentHashMap.newKeySet();

    RunMap(int shift) {
        this.shift = shift;
    }

    long granule() {
        return 1L << shift;
    }

    Slab find(long address) {
        long g = address >>> shift;
        Leaf leaf = leaf(g >>> LEAF_BITS);
        if (leaf == null) {
            return null;
        }
        int i = (int) g & LEAF_MASK;
        Run r = leaf.covering[i];
        if (r == null || address < r.base || address >= r.end) {
            r = leaf.starting[i];
            if (r == null || address < r.base || address >= r.end) {
                return null;
            }
        }
        return r.find(address);
    }

    private Leaf leaf(long key) {
        Leaf[] l = leaves;
        int lo = 0;
        int hi = l.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long k = l[mid].key;
            if (k < key) {
                lo = mid + 1;
            } else if (k > key) {
                hi = mid - 1;
            } else {
                return l[mid];
            }
        }
        return null;
    }

    /** Enters a run. Caller holds the index lock. */
    void add(Run r) {
        runs.add(r);
        set(r, r);
    }

    /** Takes a run out. Caller holds the index lock. */
    void remove(Run r) {
        set(r, null);
        runs.remove(r);
    }

    private void set(Run r, Run value) {
        long first = r.base >>> shift;
        long last = (r.end - 1) >>> shift;
        for (long g = first; g <= last; g++) {
            Leaf leaf = leaf(g >>> LEAF_BITS);
            if (leaf == null) {
                leaf = addLeaf(g >>> LEAF_BITS);
            }
            int i = (int) g & LEAF_MASK;
            if (g == first && (r.base & ((1L << shift) - 1)) != 0) {
                if (value != null || leaf.starting[i] == r) {
                    leaf.starting[i] = value;
                }
            } else if (value != null || leaf.covering[i] == r) {
                leaf.covering[i] = value;
            }
        }
    }

    private Leaf addLeaf(long key) {
        Leaf[] l = leaves;
        Leaf leaf = new Leaf(key);
        Leaf[] next = Arrays.copyOf(l, l.length + 1);
        int i = l.length;
        while (i > 0 && next[i - 1].key > key) {
            next[i] = next[i - 1];
            i--;
        }
        next[i] = leaf;
        leaves = next;
        return leaf;
    }

    /** The runs entered now (a live view: runs come and go under the index lock). */
    Set<Run> runs() {
        return runs;
    }
}
