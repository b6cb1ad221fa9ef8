package io.datamem.impl.snapshot;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BiFunction;

/**
 * The {@code datamem-snapshot} JSON schema, version 1: writing a {@link MemorySnapshot} and
 * reading one back. docs/observability.md documents every field. Fields marked derived there are
 * written for readers' convenience (a viewer need not recompute them) and ignored when read.
 */
final class SnapshotJson {

    private SnapshotJson() {
    }

    // ---------------------------------------------------------------------------------------------
    // Writing

    static void write(MemorySnapshot snapshot, Appendable appendable) throws IOException {
        Json.Out out = new Json.Out(appendable);
        out.beginObject(true)
                .field("schema", MemorySnapshot.SCHEMA)
                .field("version", MemorySnapshot.VERSION)
                .field("time", snapshot.time().toString())
                .field("processId", snapshot.processId())
                .name("handlers").beginArray(true);
        for (MemorySnapshot.Handler h : snapshot.handlers()) {
            out.beginObject(true).field("name", h.name()).field("version", h.version());
            OptionalLong live = h.liveBytes();
            if (live.isPresent()) {
                out.field("liveBytes", live.getAsLong());
            }
            out.name("layers").beginArray(true);
            for (LayerSnapshot layer : h.layers()) {
                writeLayer(out, layer);
            }
            out.end(']').end('}');
        }
        out.end(']').end('}');
    }

    private static void writeLayer(Json.Out out, LayerSnapshot layer) throws IOException {
        boolean lists = layer instanceof LayerSnapshot.Tracking || layer instanceof LayerSnapshot.Pool
                || layer instanceof LayerSnapshot.Placement;
        out.beginObject(lists).field("layer", layer.kind()).field("type", layer.type());
        switch (layer) {
            case LayerSnapshot.Statistics s -> out.field("currentBytes", s.currentBytes())
                    .field("peakBytes", s.peakBytes()).field("allocatedBytes", s.allocatedBytes())
                    .field("freedBytes", s.freedBytes()).field("allocations", s.allocations())
                    .field("frees", s.frees()).field("reallocations", s.reallocations())
                    .field("failures", s.failures());
            case LayerSnapshot.Limit l -> out.field("limitBytes", l.limitBytes()).field("inUseBytes", l.inUseBytes())
                    .field("refusals", l.refusals());
            case LayerSnapshot.Tracking t -> {
                out.field("stackTraces", t.stackTraces()).field("problems", t.problems())
                        .field("liveBlocks", t.blocks().size()).field("liveBytes", t.liveBytes())
                        .name("blocks").beginArray(true);
                for (LiveBlock b : t.blocks()) {
                    out.beginObject(false).hexField("address", b.address()).field("byteSize", b.byteSize())
                            .field("thread", b.thread()).field("threadId", b.threadId())
                            .field("time", b.time().toString()).field("ageNanos", nanos(b.age()))
                            .field("sequence", b.sequence());
                    if (b.pageSize() != 0) {
                        out.field("pageSize", b.pageSize());
                    }
                    if (!b.nodes().isEmpty()) {
                        writeNodes(out, b.nodes());
                    }
                    if (!b.stack().isEmpty()) {
                        out.field("site", b.site()).name("stack").beginArray(false);
                        for (String frame : b.stack()) {
                            out.value(frame);
                        }
                        out.end(']');
                    }
                    out.end('}');
                }
                out.end(']');
            }
            case LayerSnapshot.Pool p -> {
                out.field("allocations", p.allocations()).field("passThroughAllocations", p.passThroughAllocations())
                        .field("failures", p.failures()).field("slabAllocations", p.slabAllocations())
                        .field("slabReleases", p.slabReleases()).field("trims", p.trims())
                        .field("racingDoubleFrees", p.racingDoubleFrees());
                out.field("runByteSize", p.runByteSize()).field("usedByteSize", p.usedByteSize())
                        .field("freeByteSize", p.freeByteSize())
                        .field("largestFreeRunByteSize", p.largestFreeRunByteSize())
                        .field("slabCount", p.slabCount()).field("whollyFreeSlabs", p.whollyFreeSlabs())
                        .field("largeByteSize", p.largeByteSize());
                out.name("classes").beginArray(true);
                for (LayerSnapshot.SizeClass c : p.classes()) {
                    out.beginObject(false).field("byteSize", c.byteSize()).field("slabByteSize", c.slabByteSize())
                            .field("blocksPerSlab", c.blocksPerSlab()).field("runs", c.runs())
                            .field("runByteSize", c.runByteSize()).field("slabs", c.slabs())
                            .field("whollyFreeSlabs", c.whollyFreeSlabs()).field("depotSlabs", c.depotSlabs())
                            .field("usedBlocks", c.usedBlocks()).field("freeBlocks", c.freeBlocks())
                            .field("usedByteSize", c.usedByteSize()).field("freeByteSize", c.freeByteSize())
                            .field("uncarvedByteSize", c.uncarvedByteSize())
                            .field("largestFreeRunByteSize", c.largestFreeRunByteSize()).end('}');
                }
                out.end(']').name("runs").beginArray(true);
                for (LayerSnapshot.Run r : p.runs()) {
                    out.beginObject(false).hexField("address", r.address()).field("byteSize", r.byteSize())
                            .field("classByteSize", r.classByteSize()).field("slots", r.slots())
                            .field("slabs", r.slabs()).field("freeByteSize", r.freeByteSize())
                            .field("largestFreeRunByteSize", r.largestFreeRunByteSize()).end('}');
                }
                out.end(']').name("slabs").beginArray(true);
                for (LayerSnapshot.Slab s : p.slabs()) {
                    out.beginObject(false).hexField("address", s.address()).field("classByteSize", s.classByteSize())
                            .field("blocks", s.blocks()).field("usedBlocks", s.usedBlocks())
                            .hexField("freeMask", s.freeMask()).field("owner", s.owner()).end('}');
                }
                out.end(']').name("largeBlocks").beginArray(true);
                for (LayerSnapshot.LargeBlock b : p.largeBlocks()) {
                    out.beginObject(false).hexField("address", b.address()).field("byteSize", b.byteSize()).end('}');
                }
                out.end(']');
            }
            case LayerSnapshot.Workspace w -> out.field("currentCycleBytes", w.currentCycleBytes())
                    .field("lastCycleBytes", w.lastCycleBytes()).field("largestCycleBytes", w.largestCycleBytes())
                    .field("regionBytes", w.regionBytes()).field("cycles", w.cycles()).field("spills", w.spills())
                    .field("threads", w.threads());
            case LayerSnapshot.Placement p -> {
                out.name("mappings").beginArray(true);
                for (LayerSnapshot.Mapping m : p.mappings()) {
                    out.beginObject(false).hexField("address", m.address()).field("byteSize", m.byteSize())
                            .field("mappedByteSize", m.mappedByteSize()).field("pageSize", m.pageSize())
                            .field("pages", m.pages()).field("policy", m.policy());
                    writeNodes(out, m.nodes());
                    out.end('}');
                }
                out.end(']');
            }
            case LayerSnapshot.Other o -> {
                out.name("details").beginObject(false);
                for (Map.Entry<String, String> e : o.details().entrySet()) {
                    out.field(e.getKey(), e.getValue());
                }
                out.end('}');
            }
        }
        out.end('}');
    }

    private static void writeNodes(Json.Out out, List<Integer> nodes) throws IOException {
        out.name("nodes").beginArray(false);
        for (int n : nodes) {
            out.value(n);
        }
        out.end(']');
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException overflow) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Reading

    static MemorySnapshot read(CharSequence text) {
        Obj root = new Obj(Json.parse(text), "the document");
        String schema = root.string("schema");
        if (!MemorySnapshot.SCHEMA.equals(schema)) {
            throw new IllegalArgumentException("schema: '" + schema + "' (expected: '" + MemorySnapshot.SCHEMA + "')");
        }
        long version = root.number("version");
        if (version != MemorySnapshot.VERSION) {
            throw new IllegalArgumentException("version: " + version + " (expected: " + MemorySnapshot.VERSION
                    + "; this reader knows only that version of schema " + MemorySnapshot.SCHEMA + ")");
        }
        List<MemorySnapshot.Handler> handlers = root.list("handlers", (h, at) -> new MemorySnapshot.Handler(
                h.string("name"), h.integer("version"), h.list("layers", SnapshotJson::layer)));
        return new MemorySnapshot(root.instant("time"), root.number("processId"), handlers);
    }

    private static LayerSnapshot layer(Obj l, String at) {
        String kind = l.string("layer");
        String type = l.string("type");
        return switch (kind) {
            case "statistics" -> new LayerSnapshot.Statistics(type, l.number("currentBytes"), l.number("peakBytes"),
                    l.number("allocatedBytes"), l.number("freedBytes"), l.number("allocations"), l.number("frees"),
                    l.number("reallocations"), l.number("failures"));
            case "limit" -> new LayerSnapshot.Limit(type, l.number("limitBytes"), l.number("inUseBytes"),
                    l.number("refusals"));
            case "tracking" -> new LayerSnapshot.Tracking(type, l.string("stackTraces"), l.number("problems"),
                    l.list("blocks", (b, where) -> new LiveBlock(b.hex("address"), b.number("byteSize"),
                            b.string("thread"), b.number("threadId"), b.instant("time"),
                            Duration.ofNanos(b.number("ageNanos")), b.number("sequence"),
                            b.has("stack") ? b.list("stack", Obj::text) : List.of(),
                            b.has("pageSize") ? b.number("pageSize") : 0,
                            b.has("nodes") ? b.list("nodes", (n, w) -> n.node()) : List.of())));
            case "pool" -> new LayerSnapshot.Pool(type, l.optional("allocations"), l.optional("passThroughAllocations"),
                    l.optional("failures"), l.optional("slabAllocations"), l.optional("slabReleases"),
                    l.optional("trims"), l.optional("racingDoubleFrees"),
                    l.list("classes", (c, where) -> new LayerSnapshot.SizeClass(c.number("byteSize"),
                            c.number("slabByteSize"), c.integer("blocksPerSlab"), c.integer("runs"),
                            c.number("runByteSize"), c.integer("slabs"), c.integer("whollyFreeSlabs"),
                            c.integer("depotSlabs"), c.number("usedBlocks"), c.number("freeBlocks"),
                            c.number("uncarvedByteSize"), c.number("largestFreeRunByteSize"))),
                    l.list("runs", (r, where) -> new LayerSnapshot.Run(r.hex("address"), r.number("byteSize"),
                            r.number("classByteSize"), r.integer("slots"), r.integer("slabs"),
                            r.number("freeByteSize"), r.number("largestFreeRunByteSize"))),
                    l.list("slabs", (s, where) -> new LayerSnapshot.Slab(s.hex("address"), s.number("classByteSize"),
                            s.integer("blocks"), s.hex("freeMask"), s.string("owner"))),
                    l.list("largeBlocks", (b, where) -> new LayerSnapshot.LargeBlock(b.hex("address"),
                            b.number("byteSize"))));
            case "placement" -> new LayerSnapshot.Placement(type, l.list("mappings", (m, where) ->
                    new LayerSnapshot.Mapping(m.hex("address"), m.number("byteSize"), m.number("mappedByteSize"),
                            m.number("pageSize"), m.string("pages"), m.string("policy"),
                            m.list("nodes", (n, w) -> n.node()))));
            case "workspace" -> new LayerSnapshot.Workspace(type, l.number("currentCycleBytes"),
                    l.number("lastCycleBytes"), l.number("largestCycleBytes"), l.number("regionBytes"),
                    l.number("cycles"), l.number("spills"), l.integer("threads"));
            case "other" -> new LayerSnapshot.Other(type, l.has("details") ? l.strings("details") : Map.of());
            default -> throw new Misread(at + ".layer: '" + kind + "' (expected: statistics,"
                    + " tracking, limit, pool, workspace, placement or other)");
        };
    }

    /** A field missing or mistyped, the message saying where. */
    private static final class Misread extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Misread(String message) {
            super(message);
        }
    }

    /** A value of the parsed tree, with where it is in the document for messages. */
    private record Obj(Object value, String at) {

        private Object field(String name) {
            if (!(value instanceof Map<?, ?> map)) {
                throw new Misread(at + ": expected an object");
            }
            if (!map.containsKey(name) || map.get(name) == null) {
                throw new Misread(at + ": the field '" + name + "' is missing");
            }
            return map.get(name);
        }

        boolean has(String name) {
            return value instanceof Map<?, ?> map && map.get(name) != null;
        }

        String string(String name) {
            if (field(name) instanceof String s) {
                return s;
            }
            throw new Misread(at + "." + name + ": expected a string");
        }

        long number(String name) {
            if (field(name) instanceof Long n) {
                return n;
            }
            throw new Misread(at + "." + name + ": expected an integer that fits 64 bits");
        }

        /** An integer field that documents written before it was added lack: 0 when absent. */
        long optional(String name) {
            return has(name) ? number(name) : 0;
        }

        int integer(String name) {
            long n = number(name);
            if (n != (int) n) {
                throw new Misread(at + "." + name + ": " + n + " (expected: an integer that fits 32"
                        + " bits)");
            }
            return (int) n;
        }

        /** A string {@code "0x..."} holding 64 bits in hexadecimal. */
        long hex(String name) {
            String s = string(name);
            if (!s.startsWith("0x") || s.length() < 3 || s.length() > 18) {
                throw new Misread(at + "." + name + ": '" + s + "' (expected: 0x and 1 to 16"
                        + " hexadecimal digits)");
            }
            try {
                return Long.parseUnsignedLong(s.substring(2), 16);
            } catch (NumberFormatException e) {
                throw new Misread(at + "." + name + ": '" + s + "' (expected: hexadecimal digits)");
            }
        }

        Instant instant(String name) {
            String s = string(name);
            try {
                return Instant.parse(s);
            } catch (DateTimeParseException e) {
                throw new Misread(at + "." + name + ": '" + s + "' (expected: an ISO-8601 instant"
                        + " such as 2026-01-01T00:00:00Z)");
            }
        }

        /** This value as a string element of an array. */
        String text(String where) {
            if (value instanceof String s) {
                return s;
            }
            throw new Misread(at + ": expected a string");
        }

        /** This value as a NUMA node id. */
        Integer node() {
            if (value instanceof Long n && n >= 0 && n <= Integer.MAX_VALUE) {
                return n.intValue();
            }
            throw new Misread(at + ": expected a node id, an integer >= 0");
        }

        <T> List<T> list(String name, BiFunction<Obj, String, T> element) {
            if (!(field(name) instanceof List<?> list)) {
                throw new Misread(at + "." + name + ": expected an array");
            }
            List<T> out = new ArrayList<>(list.size());
            for (int i = 0; i < list.size(); i++) {
                String where = at + "." + name + "[" + i + "]";
                try {
                    out.add(element.apply(new Obj(list.get(i), where), where));
                } catch (Misread e) {
                    throw e;
                } catch (IllegalArgumentException | NullPointerException e) {   // a record refused the values
                    throw new Misread(where + ": " + e.getMessage());
                }
            }
            return out;
        }

        Map<String, String> strings(String name) {
            if (!(field(name) instanceof Map<?, ?> map)) {
                throw new Misread(at + "." + name + ": expected an object");
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getValue() instanceof String s)) {
                    throw new Misread(at + "." + name + "." + e.getKey() + ": expected a string");
                }
                out.put((String) e.getKey(), s);
            }
            return out;
        }
    }
}
