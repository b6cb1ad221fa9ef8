package io.datamem.impl.snapshot;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one layer of a handler's stack says about its memory in a {@link MemorySnapshot}, by kind:
 * statistics, tracking, a limit, a pool, a workspace, placement, or a layer that says nothing but its type.
 * Each record states what it promises when other threads allocate while it is read.
 */
public sealed interface LayerSnapshot {

    /**
     * The layer's class, by its simple name.
     *
     * @return for example {@code PoolingAllocator}
     */
    String type();

    /**
     * The kind of section, as the JSON schema's {@code "layer"} field names it.
     *
     * @return {@code statistics}, {@code tracking}, {@code limit}, {@code pool}, {@code workspace},
     *         {@code placement} or {@code other}
     */
    String kind();

    /**
     * The figures of a statistics layer ({@code +stats}): its whole-life figures (in a snapshot, and
     * from {@code StatisticsAdaptor.figures()}), or those of one of its scopes
     * ({@code StatisticsAdaptor.Scope.figures()}). The whole-life figures are read
     * so that every free counted has its allocation counted too: {@code currentBytes} and
     * {@code liveAllocations()} are never negative while callers free only what they allocated, and
     * each figure is exact for the calls that returned before the read began. A scope's
     * {@code currentBytes} may be negative when it freed blocks allocated before it was opened.
     *
     * @param type           the layer's class
     * @param currentBytes   bytes allocated and not yet freed
     * @param peakBytes      the highest bytes in use seen
     * @param allocatedBytes all bytes allocated (realloc growth included)
     * @param freedBytes     all bytes freed (realloc shrinkage included)
     * @param allocations    successful malloc, calloc and realloc of NULL
     * @param frees          frees of non-NULL pointers
     * @param reallocations  successful reallocations of existing blocks
     * @param failures       requests answered with NULL
     */
    record Statistics(String type, long currentBytes, long peakBytes, long allocatedBytes, long freedBytes,
                      long allocations, long frees, long reallocations, long failures) implements LayerSnapshot {

        /**
         * Validates.
         *
         * @throws NullPointerException if {@code type} is null
         */
        public Statistics {
            Objects.requireNonNull(type, "type");
        }

        @Override
        public String kind() {
            return "statistics";
        }

        /**
         * Blocks allocated and not yet freed.
         *
         * @return {@code allocations - frees}
         */
        public long liveAllocations() {
            return allocations - frees;
        }
    }

    /**
     * The live blocks of a tracking layer ({@code +tracking}). Every block listed was live when the
     * snapshot began reading the layer and none allocated after that is listed, so the blocks were
     * all live at one instant: no address appears twice and no two blocks overlap. A block freed
     * while the layer was read may still be listed.
     *
     * @param type        the layer's class
     * @param stackTraces the layer's stack-trace level: {@code off}, {@code sampled} or {@code full}
     * @param problems    the misuses the layer has refused so far (wrong sizes, frees of blocks not
     *                    live)
     * @param blocks      the live blocks, oldest first
     */
    record Tracking(String type, String stackTraces, long problems, List<LiveBlock> blocks) implements LayerSnapshot {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException     if {@code type}, {@code stackTraces} or {@code blocks} is
         *                                  null, or {@code blocks} holds null
         * @throws IllegalArgumentException if {@code problems} is negative
         */
        public Tracking {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(stackTraces, "stackTraces");
            blocks = List.copyOf(blocks);
            if (problems < 0) {
                throw new IllegalArgumentException("problems: " + problems + " (expected: >= 0)");
            }
        }

        @Override
        public String kind() {
            return "tracking";
        }

        /**
         * The bytes of the live blocks.
         *
         * @return the sum of their sizes
         */
        public long liveBytes() {
            long sum = 0;
            for (LiveBlock b : blocks) {
                sum += b.byteSize();
            }
            return sum;
        }

        /**
         * The live blocks grouped by {@linkplain LiveBlock#site() allocation site}, the most bytes
         * first; blocks without a stack trace are one group whose frame is empty.
         *
         * @return the sites
         */
        public List<Site> sites() {
            Map<String, long[]> bySite = new HashMap<>();
            for (LiveBlock b : blocks) {
                long[] figures = bySite.computeIfAbsent(b.site(), k -> new long[2]);
                figures[0]++;
                figures[1] += b.byteSize();
            }
            List<Site> sites = new ArrayList<>();
            bySite.forEach((frame, f) -> sites.add(new Site(frame, f[0], f[1])));
            sites.sort(Comparator.comparingLong(Site::bytes).reversed().thenComparing(Site::frame));
            return sites;
        }

        /**
         * The live blocks grouped by the thread that allocated them, the most bytes first.
         *
         * @return the threads, each as a {@link Site} whose frame is the thread's name
         */
        public List<Site> threads() {
            Map<String, long[]> byThread = new LinkedHashMap<>();
            for (LiveBlock b : blocks) {
                long[] figures = byThread.computeIfAbsent(b.thread(), k -> new long[2]);
                figures[0]++;
                figures[1] += b.byteSize();
            }
            List<Site> threads = new ArrayList<>();
            byThread.forEach((name, f) -> threads.add(new Site(name, f[0], f[1])));
            threads.sort(Comparator.comparingLong(Site::bytes).reversed().thenComparing(Site::frame));
            return threads;
        }
    }

    /**
     * Live blocks grouped by where they were allocated.
     *
     * @param frame  the allocation site ({@link LiveBlock#site()}), or a thread's name; empty for
     *               blocks without a stack trace
     * @param blocks how many live blocks
     * @param bytes  their bytes
     */
    record Site(String frame, long blocks, long bytes) {

        /**
         * Validates.
         *
         * @throws NullPointerException if {@code frame} is null
         */
        public Site {
            Objects.requireNonNull(frame, "frame");
        }
    }

    /**
     * A byte cap ({@code +limit=BYTES}).
     *
     * @param type       the layer's class
     * @param limitBytes the cap
     * @param inUseBytes the bytes in use under it (never negative)
     * @param refusals   the requests it refused
     */
    record Limit(String type, long limitBytes, long inUseBytes, long refusals) implements LayerSnapshot {

        /**
         * Validates.
         *
         * @throws NullPointerException     if {@code type} is null
         * @throws IllegalArgumentException if a figure is negative
         */
        public Limit {
            Objects.requireNonNull(type, "type");
            if (limitBytes < 0 || inUseBytes < 0 || refusals < 0) {
                throw new IllegalArgumentException("limit " + limitBytes + ", in use " + inUseBytes + ", refusals "
                        + refusals + " (expected: >= 0)");
            }
        }

        @Override
        public String kind() {
            return "limit";
        }
    }

    /**
     * A workspace ({@code workspace(UPSTREAM)}): the bytes of its cycles and the regions its threads
     * hold. Each thread's figures are its own plain fields, read without a lock while it may be
     * allocating: exact once the threads that used the workspace are between cycles, and otherwise
     * each thread's at about the instant it was read.
     *
     * @param type              the layer's class
     * @param currentCycleBytes the bytes the open cycles have allocated, over all threads
     * @param lastCycleBytes    the bytes the cycle that ended last allocated
     * @param largestCycleBytes the most bytes one cycle allocated
     * @param regionBytes       the regions the threads hold now, in all
     * @param cycles            the cycles ended
     * @param spills            the chunks cycles took from the upstream beyond their region
     * @param threads           the threads that have a region
     */
    record Workspace(String type, long currentCycleBytes, long lastCycleBytes, long largestCycleBytes,
                     long regionBytes, long cycles, long spills, int threads) implements LayerSnapshot {

        /**
         * Validates.
         *
         * @throws NullPointerException     if {@code type} is null
         * @throws IllegalArgumentException if a figure is negative
         */
        public Workspace {
            Objects.requireNonNull(type, "type");
            if (currentCycleBytes < 0 || lastCycleBytes < 0 || largestCycleBytes < 0 || regionBytes < 0 || cycles < 0
                    || spills < 0 || threads < 0) {
                throw new IllegalArgumentException("workspace figures " + currentCycleBytes + ", " + lastCycleBytes
                        + ", " + largestCycleBytes + ", " + regionBytes + ", " + cycles + ", " + spills + ", "
                        + threads + " (expected: each >= 0)");
            }
        }

        /**
         * A workspace's figures as a snapshot's section.
         *
         * @param figures what {@link io.datamem.array.Workspace#figures()} returned
         * @return the section
         * @throws NullPointerException if {@code figures} is null
         */
        public static Workspace of(io.datamem.array.Workspace.Figures figures) {
            return new Workspace("Workspace", figures.currentCycleBytes(), figures.lastCycleBytes(),
                    figures.largestCycleBytes(), figures.regionBytes(), figures.cycles(), figures.spills(),
                    figures.threads());
        }

        @Override
        public String kind() {
            return "workspace";
        }
    }

    /**
     * A pool ({@code pool(UPSTREAM)}): what it has done since it was made (its counters), and what
     * it holds now: its size classes, the runs it holds from its upstream, the slabs carved from
     * them with their free blocks, and the large blocks it passed to the upstream. It is both a
     * snapshot's section and what {@code PoolingAllocator.statistics()} returns.
     *
     * <p>The counters are read first, without a lock; each thread's heap counts its own
     * allocations, so they are exact once the threads that used the pool are quiescent. Then the
     * pool is read under all its classes' locks at once (the locks its slow path takes to
     * carve and release slabs and runs; its fast path goes on meanwhile), so its runs and slabs are
     * exactly those it had at one instant and the large blocks listed were live within that window:
     * each class's figures add up (see {@link SizeClass}), and no run, slab or large block overlaps
     * another, even when memory is released and handed out again while the snapshot is taken. Each
     * slab's free blocks come from one read of each of its two bitmaps while its owner may be
     * allocating, so they are the slab's at about that instant; a block its owner is moving from the
     * remote bitmap to its own may show as used.
     *
     * <p>Derived figures: the blocks given back to the pool (its fast path counts no frees) are
     * {@code allocations} less the classes' {@code usedBlocks}; the bytes held from the upstream are
     * {@link #runByteSize()}, those of blocks handed out {@link #usedByteSize()}, and those of free
     * blocks in slabs (uncarved slots left out) the sum of the classes'
     * {@link SizeClass#freeByteSize()}.
     *
     * @param type                   the layer's class
     * @param allocations            blocks handed out from the pool's classes since it was made
     * @param passThroughAllocations requests sent straight to the upstream (above the largest class)
     * @param failures               requests the upstream answered with NULL
     * @param slabAllocations        slabs carved (from runs the pool allocated from its upstream)
     * @param slabReleases           slabs released (a run whose slabs are all released goes back to
     *                               the upstream)
     * @param trims                  calls to {@code trim()}
     * @param racingDoubleFrees      frees from other threads found, when their blocks were collected,
     *                               to free a block that was already free (two frees of one block
     *                               racing); each was ignored
     * @param classes                the size classes with slabs, ascending
     * @param runs                   the runs (one upstream allocation each), by address
     * @param slabs                  the slabs, by address
     * @param largeBlocks            the live blocks above the pool's largest class, by address
     */
    record Pool(String type, long allocations, long passThroughAllocations, long failures, long slabAllocations,
                long slabReleases, long trims, long racingDoubleFrees, List<SizeClass> classes, List<Run> runs,
                List<Slab> slabs, List<LargeBlock> largeBlocks) implements LayerSnapshot {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException     if an argument is null or a list holds null
         * @throws IllegalArgumentException if a counter is negative
         */
        public Pool {
            Objects.requireNonNull(type, "type");
            if (allocations < 0 || passThroughAllocations < 0 || failures < 0 || slabAllocations < 0
                    || slabReleases < 0 || trims < 0 || racingDoubleFrees < 0) {
                throw new IllegalArgumentException("pool counters: " + allocations + " allocations, "
                        + passThroughAllocations + " passed through, " + failures + " failures, " + slabAllocations
                        + " slabs carved, " + slabReleases + " released, " + trims + " trims, " + racingDoubleFrees
                        + " racing double frees (expected: >= 0)");
            }
            classes = List.copyOf(classes);
            runs = List.copyOf(runs);
            slabs = List.copyOf(slabs);
            largeBlocks = List.copyOf(largeBlocks);
        }

        @Override
        public String kind() {
            return "pool";
        }

        /**
         * The bytes the pool holds from its upstream in runs.
         *
         * @return the sum of the classes' run bytes
         */
        public long runByteSize() {
            return classes.stream().mapToLong(SizeClass::runByteSize).sum();
        }

        /**
         * The bytes of blocks handed out from slabs (class sizes).
         *
         * @return bytes
         */
        public long usedByteSize() {
            return classes.stream().mapToLong(SizeClass::usedByteSize).sum();
        }

        /**
         * The free bytes in runs: free blocks of slabs and slots of runs no slab is carved in.
         *
         * @return bytes
         */
        public long freeByteSize() {
            return classes.stream().mapToLong(c -> c.freeByteSize() + c.uncarvedByteSize()).sum();
        }

        /**
         * The longest stretch of free bytes inside one run (free blocks and uncarved slots next to
         * each other): how fragmented the free memory is.
         *
         * @return bytes, 0 if nothing is free
         */
        public long largestFreeRunByteSize() {
            return classes.stream().mapToLong(SizeClass::largestFreeRunByteSize).max().orElse(0);
        }

        /**
         * The slabs with no block handed out.
         *
         * @return a count
         */
        public long whollyFreeSlabs() {
            return classes.stream().mapToLong(SizeClass::whollyFreeSlabs).sum();
        }

        /**
         * The slabs carved.
         *
         * @return a count
         */
        public long slabCount() {
            return classes.stream().mapToLong(SizeClass::slabs).sum();
        }

        /**
         * The bytes of the large blocks the pool passed to its upstream.
         *
         * @return bytes
         */
        public long largeByteSize() {
            return largeBlocks.stream().mapToLong(LargeBlock::byteSize).sum();
        }
    }

    /**
     * One size class of a pool. Its figures add up: {@code usedBlocks + freeBlocks == slabs *
     * blocksPerSlab} and {@code runByteSize == slabs * slabByteSize + uncarvedByteSize}.
     *
     * @param byteSize               the class size: every block of it takes this many bytes
     * @param slabByteSize           the bytes of one slab, {@code byteSize * blocksPerSlab}
     * @param blocksPerSlab          blocks per slab (1 to 64)
     * @param runs                   the runs of this class
     * @param runByteSize            their bytes
     * @param slabs                  the slabs carved in them
     * @param whollyFreeSlabs        slabs with every block free
     * @param depotSlabs             wholly free slabs in the pool's shared depot (the rest are held by
     *                               threads)
     * @param usedBlocks             blocks handed out
     * @param freeBlocks             blocks free in the slabs
     * @param uncarvedByteSize       bytes of the runs' slots that hold no slab
     * @param largestFreeRunByteSize the longest stretch of free bytes in one run of this class
     */
    record SizeClass(long byteSize, long slabByteSize, int blocksPerSlab, int runs, long runByteSize, int slabs,
                     int whollyFreeSlabs, int depotSlabs, long usedBlocks, long freeBlocks, long uncarvedByteSize,
                     long largestFreeRunByteSize) {

        /**
         * Validates: no figure negative, and the figures add up.
         *
         * @throws IllegalArgumentException if a figure is negative or they do not add up
         */
        public SizeClass {
            if (byteSize <= 0 || blocksPerSlab < 1 || blocksPerSlab > 64 || slabByteSize != byteSize * blocksPerSlab
                    || runs < 0 || slabs < 0 || whollyFreeSlabs < 0 || whollyFreeSlabs > slabs || depotSlabs < 0
                    || depotSlabs > whollyFreeSlabs || usedBlocks < 0 || freeBlocks < 0
                    || usedBlocks + freeBlocks != (long) slabs * blocksPerSlab || uncarvedByteSize < 0
                    || runByteSize != slabs * slabByteSize + uncarvedByteSize || largestFreeRunByteSize < 0
                    || largestFreeRunByteSize > freeBlocks * byteSize + uncarvedByteSize) {
                throw new IllegalArgumentException("size class of " + byteSize + " bytes (" + blocksPerSlab
                        + " per slab of " + slabByteSize + "): " + runs + " runs of " + runByteSize + " bytes, " + slabs
                        + " slabs (" + whollyFreeSlabs + " wholly free, " + depotSlabs + " in the depot), "
                        + usedBlocks + " used and " + freeBlocks + " free blocks, " + uncarvedByteSize
                        + " bytes uncarved, largest free run " + largestFreeRunByteSize
                        + " (expected: figures >= 0 that add up)");
            }
        }

        /**
         * The bytes of the blocks handed out.
         *
         * @return {@code usedBlocks * byteSize}
         */
        public long usedByteSize() {
            return usedBlocks * byteSize;
        }

        /**
         * The bytes of the free blocks in slabs (not counting uncarved slots).
         *
         * @return {@code freeBlocks * byteSize}
         */
        public long freeByteSize() {
            return freeBlocks * byteSize;
        }
    }

    /**
     * One run of a pool: an upstream allocation carved into slots for slabs of one class.
     *
     * @param address                its first byte
     * @param byteSize               its size
     * @param classByteSize          the class its slabs are of
     * @param slots                  the slabs it has room for
     * @param slabs                  the slabs carved in it now
     * @param freeByteSize           its free bytes: free blocks and uncarved slots
     * @param largestFreeRunByteSize its longest stretch of free bytes
     */
    record Run(long address, long byteSize, long classByteSize, int slots, int slabs, long freeByteSize,
               long largestFreeRunByteSize) {

        /**
         * Validates.
         *
         * @throws IllegalArgumentException if the figures are negative or inconsistent
         */
        public Run {
            if (byteSize <= 0 || classByteSize <= 0 || slots < 1 || slabs < 0 || slabs > slots || freeByteSize < 0
                    || freeByteSize > byteSize || largestFreeRunByteSize < 0 || largestFreeRunByteSize > freeByteSize) {
                throw new IllegalArgumentException("run at 0x" + Long.toHexString(address) + " of " + byteSize
                        + " bytes: " + slabs + " of " + slots + " slabs, " + freeByteSize
                        + " bytes free, largest free run " + largestFreeRunByteSize + " (expected: consistent figures)");
            }
        }

        /**
         * The first byte past the run.
         *
         * @return {@code address + byteSize}
         */
        public long end() {
            return address + byteSize;
        }
    }

    /**
     * One slab of a pool.
     *
     * @param address       its first block
     * @param classByteSize its class: the size of each block
     * @param blocks        its blocks (1 to 64)
     * @param freeMask      bit {@code i} set when block {@code i} (at {@code address + i *
     *                      classByteSize}) is free
     * @param owner         who holds it: a thread's name, {@code "depot"} (shared, wholly free) or
     *                      {@code "virtual threads"} (the heap they share)
     */
    record Slab(long address, long classByteSize, int blocks, long freeMask, String owner) {

        /**
         * Validates.
         *
         * @throws NullPointerException     if {@code owner} is null
         * @throws IllegalArgumentException if {@code blocks} is out of range or {@code freeMask} has
         *                                  bits beyond it
         */
        public Slab {
            Objects.requireNonNull(owner, "owner");
            if (classByteSize <= 0 || blocks < 1 || blocks > 64 || (blocks < 64 && (freeMask >>> blocks) != 0)) {
                throw new IllegalArgumentException("slab at 0x" + Long.toHexString(address) + ": " + blocks
                        + " blocks of " + classByteSize + ", free mask 0x" + Long.toHexString(freeMask)
                        + " (expected: 1 to 64 blocks, no free bit beyond them)");
            }
        }

        /**
         * The blocks handed out.
         *
         * @return {@code blocks - bitCount(freeMask)}
         */
        public int usedBlocks() {
            return blocks - Long.bitCount(freeMask);
        }

        /**
         * The first byte past the slab.
         *
         * @return {@code address + blocks * classByteSize}
         */
        public long end() {
            return address + blocks * classByteSize;
        }
    }

    /**
     * A block a pool passed to its upstream (above its largest class).
     *
     * @param address the block
     * @param byteSize its size
     */
    record LargeBlock(long address, long byteSize) {
    }

    /**
     * The blocks a huge-page or NUMA allocator mapped, with their pages. The blocks listed were in
     * the allocator's table both when read and when checked again after, so they were all live at
     * one instant: none appears twice and no two overlap.
     *
     * @param type     the layer's class
     * @param mappings the blocks, by address
     */
    record Placement(String type, List<Mapping> mappings) implements LayerSnapshot {

        /**
         * Validates and copies, sorting the mappings by address.
         *
         * @throws NullPointerException if an argument is null or the list holds null
         */
        public Placement {
            Objects.requireNonNull(type, "type");
            mappings = mappings.stream().sorted(Comparator.comparingLong(Mapping::address)).toList();
        }

        @Override
        public String kind() {
            return "placement";
        }

        /**
         * The mapping whose span holds an address.
         *
         * @param address an address
         * @return the mapping, or null if none holds it
         */
        public Mapping find(long address) {
            int lo = 0;
            int hi = mappings.size() - 1;
            Mapping found = null;
            while (lo <= hi) {   // the last mapping starting at or before the address
                int mid = (lo + hi) >>> 1;
                Mapping m = mappings.get(mid);
                if (m.address() <= address) {
                    found = m;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            return found != null && address < found.address() + Math.max(found.mappedByteSize(), 1) ? found : null;
        }
    }

    /**
     * One block a placement layer mapped; also what {@code HugePageAllocator.mapping(ptr)} says of a
     * block.
     *
     * @param address        the block
     * @param byteSize       the size asked for
     * @param mappedByteSize the bytes mapped for it (whole pages)
     * @param pageSize       the size of its pages
     * @param pages          the kind of pages: {@code normal}, {@code transparent},
     *                       {@code hugetlb_2m}, {@code hugetlb_1g}, or {@code upstream} (memory a
     *                       NUMA allocator's upstream gave); {@code ", fallback"} is appended when
     *                       these are not the pages asked for
     * @param policy         the NUMA policy it is bound with ({@code bind}, {@code preferred},
     *                       {@code interleave}, ...), empty if none
     * @param nodes          the NUMA nodes the policy names for it, ascending; empty if none
     */
    record Mapping(long address, long byteSize, long mappedByteSize, long pageSize, String pages, String policy,
                   List<Integer> nodes) {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException     if {@code pages}, {@code policy} or {@code nodes} is null
         * @throws IllegalArgumentException if a size is negative
         */
        public Mapping {
            Objects.requireNonNull(pages, "pages");
            Objects.requireNonNull(policy, "policy");
            nodes = List.copyOf(nodes);
            if (byteSize < 0 || mappedByteSize < 0 || pageSize < 0) {
                throw new IllegalArgumentException("mapping at 0x" + Long.toHexString(address) + ": " + byteSize
                        + " bytes, " + mappedByteSize + " mapped, pages of " + pageSize + " (expected: >= 0)");
            }
        }
    }

    /**
     * A layer that keeps no figures (a leaf such as {@code aligned64}, a guard, a log), or one that
     * describes itself in a few words.
     *
     * @param type    the layer's class
     * @param details what the layer says about itself, name to value, in its order; empty for most
     */
    record Other(String type, Map<String, String> details) implements LayerSnapshot {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException if an argument is null or the map holds null
         */
        public Other {
            Objects.requireNonNull(type, "type");
            details = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(details));
            details.forEach((k, v) -> {
                Objects.requireNonNull(k, "details: a name");
                Objects.requireNonNull(v, k);
            });
        }

        @Override
        public String kind() {
            return "other";
        }
    }
}
