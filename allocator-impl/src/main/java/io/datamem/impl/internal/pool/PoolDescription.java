package io.datamem.impl.internal.pool;

import io.datamem.impl.snapshot.LayerSnapshot;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A pool's section of a snapshot, {@link LayerSnapshot.Pool}: its counters, then its classes,
 * runs, slabs (with their free blocks) and large blocks. Read under every lock of the depot (see
 * {@link PoolingAllocatorImpl#statistics()}).
 */
final class PoolDescription {

    /** The pool's counters, read before its depot locks are taken. */
    record Counters(long allocations, long passThroughAllocations, long failures, long slabAllocations,
                    long slabReleases, long trims, long racingDoubleFrees) {
    }

    private PoolDescription() {
    }

    /** The pool's section; the caller holds every depot lock, under which runs come and go. */
    static LayerSnapshot.Pool describe(Counters n, SizeClasses classes, Depot depot, ThreadHeaps heaps,
                                       LargeBlocks largeBlocks) {
        List<List<Run>> byClass = new ArrayList<>(classes.classCount());
        for (int c = 0; c < classes.classCount(); c++) {
            byClass.add(new ArrayList<>());
        }
        for (Run r : depot.index.runs()) {
            byClass.get(r.classIndex).add(r);
        }
        List<LayerSnapshot.SizeClass> sizeClasses = new ArrayList<>();
        List<LayerSnapshot.Run> runs = new ArrayList<>();
        List<LayerSnapshot.Slab> slabs = new ArrayList<>();
        for (int c = 0; c < classes.classCount(); c++) {
            if (!byClass.get(c).isEmpty()) {
                sizeClasses.add(describeClass(c, byClass.get(c), classes, depot, heaps, runs, slabs));
            }
        }
        runs.sort(Comparator.comparingLong(LayerSnapshot.Run::address));
        slabs.sort(Comparator.comparingLong(LayerSnapshot.Slab::address));
        List<LayerSnapshot.LargeBlock> large = largeBlocks.describe();
        return new LayerSnapshot.Pool("PoolingAllocator", n.allocations(), n.passThroughAllocations(), n.failures(),
                n.slabAllocations(), n.slabReleases(), n.trims(), n.racingDoubleFrees(), sizeClasses, runs, slabs,
                large);
    }

    /** One class, its runs and slabs added to the lists; caller holds the class's depot lock. */
    private static LayerSnapshot.SizeClass describeClass(int c, List<Run> mine, SizeClasses classes, Depot depot,
                                                         ThreadHeaps heaps, List<LayerSnapshot.Run> runs,
                                                         List<LayerSnapshot.Slab> slabs) {
        long size = classes.classSizes[c];
        int slabCount = 0;
        int whollyFree = 0;
        long usedBlocks = 0;
        long freeBlocks = 0;
        long uncarved = 0;
        long runBytes = 0;
        long largestInClass = 0;
        for (Run r : mine) {
            long runFree = 0;
            long largest = 0;
            long stretch = 0;   // free bytes just before the next block
            int carved = 0;
            for (int slot = 0; slot < r.slots; slot++) {
                Slab s = r.slabs[slot];
                if (s == null) {
                    uncarved += r.slabBytes;
                    runFree += r.slabBytes;
                    stretch += r.slabBytes;
                    continue;
                }
                carved++;
                long remote = s.remote;
                long free = (((long) Slab.FREE.getAcquire(s)) | remote) & s.mask;
                int freeCount = Long.bitCount(free);
                freeBlocks += freeCount;
                usedBlocks += s.blockCount - freeCount;
                runFree += freeCount * s.blockSize;
                if (free == s.mask) {
                    whollyFree++;
                    stretch += r.slabBytes;
                } else {
                    for (int i = 0; i < s.blockCount; i++) {
                        if ((free & (1L << i)) != 0) {
                            stretch += s.blockSize;
                        } else {
                            largest = Math.max(largest, stretch);
                            stretch = 0;
                        }
                    }
                }
                slabs.add(new LayerSnapshot.Slab(s.base, s.blockSize, s.blockCount, free, heaps.ownerName(s.owner)));
            }
            largest = Math.max(largest, stretch);
            slabCount += carved;
            runBytes += r.byteSize();
            largestInClass = Math.max(largestInClass, largest);
            runs.add(new LayerSnapshot.Run(r.base, r.byteSize(), size, r.slots, carved, runFree, largest));
        }
        return new LayerSnapshot.SizeClass(size, classes.slabByteSizes[c], classes.blocksPerSlab[c], mine.size(),
                runBytes, slabCount, whollyFree, depot.bins[c].count, usedBlocks, freeBlocks, uncarved,
                largestInClass);
    }
}
