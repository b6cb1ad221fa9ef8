package io.datamem.impl.snapshot;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.array.Workspace;
import io.datamem.impl.AllocatorStack;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a set of handlers hold, at about one instant: for each handler, every layer of its stack
 * that keeps figures (statistics, tracked live blocks, a limit, a pool's classes, runs and slabs,
 * the pages of mapped blocks) and the type of every other layer.
 *
 * <pre>{@code
 * DataMemHandler h = DataMem.handler("pool(aligned64)+stats+tracking");
 * MemorySnapshot s = MemorySnapshot.take(h);
 * System.out.println(s.handlers().getFirst().summary());
 * s.write(Path.of("memory.json"));                     // the "datamem-snapshot" JSON, version 1
 * MemorySnapshot again = MemorySnapshot.read(Path.of("memory.json"));   // equal to s
 * }</pre>
 *
 * <h2>Taking one</h2>
 * {@link #take} walks each handler's layers, outermost first ({@link AllocatorStack#layers}, and
 * on into a pool's upstream), and asks each layer that implements {@link SnapshotSource} to describe
 * itself; the tracked blocks then get the page size and NUMA nodes of the placement layer that
 * mapped their memory, when one did. Nothing is stopped: other threads go on allocating and freeing
 * while the layers are read, one after the other, each under the locks and atomics it already has,
 * and no layer's fast path does more for it. The cost is proportional to the live blocks tracked
 * and the slabs of the pools.
 *
 * <h2>Consistent</h2>
 * A snapshot is not a stop-the-world picture of all layers at one instant: two layers are read at
 * two moments, so a block allocated in between may appear in one and not the other. Within a layer
 * it is consistent, as each {@link LayerSnapshot} record states:
 * <ul>
 *   <li>no figure is negative, and figures that must add up do (a pool class's used and free blocks
 *       fill its slabs, its slabs and uncarved slots fill its runs; the records' constructors check
 *       it);</li>
 *   <li>the blocks a tracking or placement layer lists were all live at one instant: no address is
 *       listed twice, and no two listed blocks overlap, even when a block is freed and its memory
 *       handed out again while the snapshot runs;</li>
 *   <li>a block allocated after the snapshot began reading a tracking layer is not listed; one freed
 *       while it was read may be.</li>
 * </ul>
 *
 * <h2>JSON</h2>
 * {@link #toJson()}, {@link #write(Path)} and {@link #read(Path)} use the schema
 * {@value #SCHEMA}, version {@value #VERSION}, documented in {@code docs/observability.md}: the
 * document starts with {@code {"schema": "datamem-snapshot", "version": 1, ...}}; addresses are
 * strings in hexadecimal ({@code "0x7f3a2c001000"}), sizes are numbers of bytes, times ISO-8601
 * instants. Reading checks the schema and the version and ignores fields it does not know.
 *
 * @param time      when the snapshot began
 * @param processId the process it was taken in
 * @param handlers  one entry per handler, in the order given
 */
public record MemorySnapshot(Instant time, long processId, List<Handler> handlers) {

    /** The value of the JSON document's {@code "schema"} field. */
    public static final String SCHEMA = "datamem-snapshot";

    /** The version of the JSON schema this class writes and reads. */
    public static final int VERSION = 1;

    /**
     * Validates and copies.
     *
     * @throws NullPointerException if {@code time} or {@code handlers} is null, or holds null
     */
    public MemorySnapshot {
        Objects.requireNonNull(time, "time");
        handlers = List.copyOf(handlers);
    }

    /**
     * Takes a snapshot of handlers.
     *
     * @param handlers the handlers, in the order the snapshot lists them
     * @return the snapshot
     * @throws NullPointerException if {@code handlers} is null or holds null
     */
    public static MemorySnapshot take(DataMemHandler... handlers) {
        return take(Arrays.asList(handlers));
    }

    /**
     * Takes a snapshot of handlers.
     *
     * @param handlers the handlers, in the order the snapshot lists them
     * @return the snapshot
     * @throws NullPointerException if {@code handlers} is null or holds null
     */
    public static MemorySnapshot take(Collection<? extends DataMemHandler> handlers) {
        Instant time = Instant.now();
        List<Handler> all = new ArrayList<>(handlers.size());
        for (DataMemHandler h : handlers) {
            all.add(describe(Objects.requireNonNull(h, "handler")));
        }
        return new MemorySnapshot(time, ProcessHandle.current().pid(), all);
    }

    private static Handler describe(DataMemHandler handler) {
        List<LayerSnapshot> layers = new ArrayList<>();
        Set<DataMemAllocator> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        DataMemAllocator top = handler.allocator();
        while (top != null) {
            DataMemAllocator next = null;
            for (DataMemAllocator layer : AllocatorStack.layers(top)) {
                if (!seen.add(layer)) {
                    next = null;
                    break;   // a stack that loops: each layer described once
                }
                if (layer instanceof SnapshotSource source) {
                    layers.add(source.snapshot());
                    next = source.snapshotUpstream();   // only the last layer's counts: a leaf's
                } else if (layer instanceof Workspace w) {   // in allocator-api, which knows no snapshots
                    layers.add(LayerSnapshot.Workspace.of(w.figures()));
                    next = w.upstream();
                } else {
                    layers.add(new LayerSnapshot.Other(typeName(layer), Map.of()));
                    next = null;
                }
            }
            top = next != null && !seen.contains(next) ? next : null;
        }
        return new Handler(handler.name(), handler.version(), placeBlocks(layers));
    }

    /**
     * A layer's type as a snapshot names it: its class's simple name, less the {@code Impl} of an
     * implementation whose exported interface has the rest ({@code GuardAdaptor} for
     * {@code GuardAdaptorImpl}).
     */
    private static String typeName(DataMemAllocator layer) {
        String n = layer.getClass().getSimpleName();
        return n.endsWith("Impl") ? n.substring(0, n.length() - "Impl".length()) : n;
    }

    /** Gives each tracked block the page size and nodes of the placement layer below it that maps it. */
    private static List<LayerSnapshot> placeBlocks(List<LayerSnapshot> layers) {
        List<LayerSnapshot> placed = new ArrayList<>(layers);
        for (int i = 0; i < placed.size(); i++) {
            if (!(placed.get(i) instanceof LayerSnapshot.Tracking t)) {
                continue;
            }
            List<LayerSnapshot.Placement> below = new ArrayList<>();
            for (LayerSnapshot l : placed.subList(i + 1, placed.size())) {
                if (l instanceof LayerSnapshot.Placement p && !p.mappings().isEmpty()) {
                    below.add(p);
                }
            }
            if (below.isEmpty()) {
                continue;
            }
            List<LiveBlock> blocks = new ArrayList<>(t.blocks().size());
            for (LiveBlock b : t.blocks()) {
                LiveBlock withPages = b;
                for (LayerSnapshot.Placement p : below) {
                    LayerSnapshot.Mapping m = p.find(b.address());
                    if (m != null) {
                        withPages = b.withPlacement(m.pageSize(), m.nodes());
                        break;
                    }
                }
                blocks.add(withPages);
            }
            placed.set(i, new LayerSnapshot.Tracking(t.type(), t.stackTraces(), t.problems(), blocks));
        }
        return placed;
    }

    // ---------------------------------------------------------------------------------------------
    // JSON

    /**
     * The snapshot as a JSON document of schema {@value #SCHEMA}, version {@value #VERSION}.
     *
     * @return the document, ending with a line break
     */
    public String toJson() {
        StringBuilder b = new StringBuilder(4096);
        try {
            writeJson(b);
        } catch (IOException e) {
            throw new AssertionError(e);   // a StringBuilder does not throw
        }
        return b.toString();
    }

    /**
     * Writes the snapshot as JSON ({@link #toJson()}).
     *
     * @param out where to write
     * @throws IOException          if {@code out} fails
     * @throws NullPointerException if {@code out} is null
     */
    public void writeJson(Appendable out) throws IOException {
        SnapshotJson.write(this, Objects.requireNonNull(out, "out"));
    }

    /**
     * Writes the snapshot as JSON to a file, in UTF-8, replacing it if it exists.
     *
     * @param file the file
     * @return {@code file}
     * @throws IOException          if the file cannot be written
     * @throws NullPointerException if {@code file} is null
     */
    public Path write(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            writeJson(w);
        }
        return file;
    }

    /**
     * Reads a snapshot from its JSON document.
     *
     * @param json a document of schema {@value #SCHEMA}
     * @return the snapshot
     * @throws NullPointerException     if {@code json} is null
     * @throws IllegalArgumentException if the text is not JSON, not of schema {@value #SCHEMA}, of
     *                                  another version than {@value #VERSION}, or lacks or
     *                                  mistypes a field; the message says where
     */
    public static MemorySnapshot parse(CharSequence json) {
        return SnapshotJson.read(Objects.requireNonNull(json, "json"));
    }

    /**
     * Reads a snapshot from a JSON file in UTF-8.
     *
     * @param file the file
     * @return the snapshot
     * @throws IOException              if the file cannot be read
     * @throws NullPointerException     if {@code file} is null
     * @throws IllegalArgumentException as for {@link #parse}, naming the file
     */
    public static MemorySnapshot read(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * A short text on every handler: {@link Handler#summary()} of each, one after the other.
     *
     * @return the summaries, each line indented by two spaces
     */
    public String summary() {
        StringBuilder b = new StringBuilder();
        for (Handler h : handlers) {
            b.append(h.summary()).append('\n');
        }
        return b.toString().stripTrailing();
    }

    // ---------------------------------------------------------------------------------------------

    /**
     * One handler in a snapshot.
     *
     * @param name    the handler's name
     * @param version its version
     * @param layers  its layers, outermost first (a pool's upstream after the pool)
     */
    public record Handler(String name, int version, List<LayerSnapshot> layers) {

        /** How many allocation sites or threads a summary names at most. */
        private static final int SUMMARY_ENTRIES = 5;

        /**
         * Validates and copies.
         *
         * @throws NullPointerException if {@code name} or {@code layers} is null, or holds null
         */
        public Handler {
            Objects.requireNonNull(name, "name");
            layers = List.copyOf(layers);
        }

        /**
         * The layers of one kind, outermost first.
         *
         * @param <T>  the kind
         * @param kind for example {@code LayerSnapshot.Pool.class}
         * @return the layers of that kind
         * @throws NullPointerException if {@code kind} is null
         */
        public <T extends LayerSnapshot> List<T> layers(Class<T> kind) {
            Objects.requireNonNull(kind, "kind");
            return layers.stream().filter(kind::isInstance).map(kind::cast).toList();
        }

        /**
         * The live blocks of the outermost tracking layer: the blocks as the handler's callers see
         * them.
         *
         * @return the blocks, oldest first; empty if the handler has no tracking layer
         */
        public List<LiveBlock> blocks() {
            List<LayerSnapshot.Tracking> t = layers(LayerSnapshot.Tracking.class);
            return t.isEmpty() ? List.of() : t.getFirst().blocks();
        }

        /**
         * The bytes live through the handler, from its outermost layer that knows: the tracked
         * blocks, the statistics, the limit, the pool's blocks in use, or a workspace's open cycles.
         *
         * @return bytes, or empty if no layer keeps figures
         */
        public OptionalLong liveBytes() {
            for (LayerSnapshot l : layers) {
                switch (l) {
                    case LayerSnapshot.Tracking t -> {
                        return OptionalLong.of(t.liveBytes());
                    }
                    case LayerSnapshot.Statistics s -> {
                        return OptionalLong.of(s.currentBytes());
                    }
                    case LayerSnapshot.Limit lim -> {
                        return OptionalLong.of(lim.inUseBytes());
                    }
                    case LayerSnapshot.Pool p -> {
                        return OptionalLong.of(p.usedByteSize() + p.largeByteSize());
                    }
                    case LayerSnapshot.Workspace w -> {
                        return OptionalLong.of(w.currentCycleBytes());
                    }
                    default -> {
                    }
                }
            }
            return OptionalLong.empty();
        }

        /**
         * A short text: the bytes live, a line per layer that keeps figures (the limit, the
         * statistics, each pool with its free bytes and largest free run), and the largest consumers
         * (the allocation sites, or the threads when no stack was recorded, holding the most
         * tracked bytes).
         *
         * @return the lines, each indented by two spaces; just the first line when no layer keeps
         *         figures
         */
        public String summary() {
            StringBuilder b = new StringBuilder();
            OptionalLong live = liveBytes();
            b.append("  handler '").append(name).append("': ");
            if (live.isEmpty()) {
                b.append("no layer keeps figures (add +stats, or +tracking to see the blocks)");
                return b.toString();
            }
            b.append(live.getAsLong()).append(" bytes live");
            List<LiveBlock> blocks = blocks();
            if (!layers(LayerSnapshot.Tracking.class).isEmpty()) {
                b.append(" in ").append(blocks.size()).append(" tracked block").append(blocks.size() == 1 ? "" : "s");
            }
            b.append('\n');
            for (LayerSnapshot l : layers) {
                switch (l) {
                    case LayerSnapshot.Limit lim -> b.append(String.format(Locale.ROOT,
                            "  limit: %d of %d bytes in use, %d request(s) refused%n", lim.inUseBytes(),
                            lim.limitBytes(), lim.refusals()));
                    case LayerSnapshot.Statistics s -> b.append(String.format(Locale.ROOT,
                            "  statistics: %d bytes in use, peak %d, %d allocations, %d frees, %d failures%n",
                            s.currentBytes(), s.peakBytes(), s.allocations(), s.frees(), s.failures()));
                    case LayerSnapshot.Pool p -> b.append(String.format(Locale.ROOT,
                            "  pool: %d bytes held from its upstream, %d in use in blocks, %d free (largest free run"
                                    + " %d bytes), %d of %d slabs wholly free; %d bytes in %d large block(s)%n",
                            p.runByteSize(), p.usedByteSize(), p.freeByteSize(), p.largestFreeRunByteSize(),
                            p.whollyFreeSlabs(), p.slabCount(), p.largeByteSize(), p.largeBlocks().size()));
                    case LayerSnapshot.Workspace w -> b.append(String.format(Locale.ROOT,
                            "  workspace: %d bytes in the open cycles, last cycle %d, largest %d; %d bytes of regions"
                                    + " on %d thread(s), %d cycle(s), %d spill(s)%n", w.currentCycleBytes(),
                            w.lastCycleBytes(), w.largestCycleBytes(), w.regionBytes(), w.threads(), w.cycles(),
                            w.spills()));
                    default -> {
                    }
                }
            }
            List<LayerSnapshot.Tracking> tracking = layers(LayerSnapshot.Tracking.class);
            if (!tracking.isEmpty() && !blocks.isEmpty()) {
                LayerSnapshot.Tracking t = tracking.getFirst();
                List<LayerSnapshot.Site> sites = t.sites();
                LayerSnapshot.Site unknown = null;
                List<LayerSnapshot.Site> known = new ArrayList<>();
                for (LayerSnapshot.Site s : sites) {
                    if (s.frame().isEmpty()) {
                        unknown = s;
                    } else {
                        known.add(s);
                    }
                }
                if (known.isEmpty()) {
                    b.append("  largest consumers by thread (no stack traces recorded: use +tracking=full):\n");
                    for (LayerSnapshot.Site s : t.threads().subList(0, Math.min(SUMMARY_ENTRIES, t.threads().size()))) {
                        b.append(String.format(Locale.ROOT, "    %d bytes in %d block(s) on thread '%s'%n", s.bytes(),
                                s.blocks(), s.frame()));
                    }
                } else {
                    b.append("  largest consumers by allocation site:\n");
                    for (LayerSnapshot.Site s : known.subList(0, Math.min(SUMMARY_ENTRIES, known.size()))) {
                        b.append(String.format(Locale.ROOT, "    %d bytes in %d block(s) at %s%n", s.bytes(),
                                s.blocks(), s.frame()));
                    }
                    if (known.size() > SUMMARY_ENTRIES) {
                        b.append("    ... and ").append(known.size() - SUMMARY_ENTRIES).append(" more site(s)\n");
                    }
                    if (unknown != null) {
                        b.append(String.format(Locale.ROOT, "    %d bytes in %d block(s) without a stack trace"
                                + " (tracking=%s)%n", unknown.bytes(), unknown.blocks(), t.stackTraces()));
                    }
                }
            }
            return b.toString().stripTrailing();
        }
    }
}
