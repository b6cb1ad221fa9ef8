package io.datamem.examples.cli;

import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.snapshot.MemorySnapshot;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * Renders a {@link MemorySnapshot} as one self-contained HTML page: inline CSS and SVG charts, no
 * script and no external resource. The charts carry stable ids: {@code fragmentation-N} (the N-th
 * pool of the page, from 0), {@code sites-H} (the allocation sites of the H-th handler),
 * {@code blocks-H} (its table of live blocks) and {@code bytes-over-time} (from an allocation log).
 */
final class SnapshotPage {

    /** The colour of the bytes in use: of the fragmentation bars, the sites' bars and the log's line. */
    static final String USED = "#d62728";
    /** The colour of the free blocks in slabs. */
    static final String FREE = "#ff9896";
    /** The colour of the uncarved slots of runs. */
    static final String UNCARVED = "#c7c7c7";
    /** The colour of the largest free run. */
    static final String LARGEST = "#1f77b4";

    /** The most live blocks the table lists. */
    static final int MAX_BLOCKS = 1000;
    /** The most allocation sites the chart shows. */
    static final int MAX_SITES = 15;
    /** The most points of the bytes-over-time line. */
    private static final int MAX_POINTS = 2000;

    private SnapshotPage() {
    }

    /**
     * The page.
     *
     * @param snapshot the snapshot
     * @param source   what it was read from, for the title
     * @param log      the entries of an allocation log to chart the bytes in use over time of, or null
     * @param logName  the log's name, or null
     * @return the HTML document
     */
    static String render(MemorySnapshot snapshot, String source, List<AllocationLog.Entry> log, String logName) {
        StringBuilder b = new StringBuilder(16384);
        b.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>datamem snapshot: ")
                .append(esc(source)).append("</title>\n<style>\n")
                .append("body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1150px}\n")
                .append("h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.5em}")
                .append("h3{font-size:1.05em}\n")
                .append("table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}\n")
                .append("th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\n")
                .append("td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n")
                .append("th{background:#f2f2f2}code{font-size:0.95em}\n")
                .append("svg{display:block;margin:0.5em 0}svg text{font-family:sans-serif;font-size:11px}\n")
                .append(".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;")
                .append("vertical-align:middle}\n.note{color:#666;font-size:0.9em}\n")
                .append("</style>\n</head>\n<body>\n");
        b.append("<h1>datamem memory snapshot</h1>\n<table id=\"header\">\n");
        row(b, "source", esc(source));
        row(b, "schema", esc(MemorySnapshot.SCHEMA) + ", version " + MemorySnapshot.VERSION);
        row(b, "time", esc(snapshot.time().toString()));
        row(b, "process", Long.toString(snapshot.processId()));
        row(b, "handlers", Integer.toString(snapshot.handlers().size()));
        b.append("</table>\n");
        if (log != null) {
            bytesOverTime(b, log, logName);
        }
        int pools = 0;
        for (int h = 0; h < snapshot.handlers().size(); h++) {
            pools = handler(b, snapshot.handlers().get(h), h, pools);
        }
        b.append("</body>\n</html>\n");
        return b.toString();
    }

    private static int handler(StringBuilder b, MemorySnapshot.Handler handler, int index, int pools) {
        b.append("<section class=\"handler\" id=\"handler-").append(index).append("\">\n<h2>Handler <code>")
                .append(esc(handler.name())).append("</code> (version ").append(handler.version()).append(")</h2>\n");
        OptionalLong live = handler.liveBytes();
        b.append("<p>Live: <b>")
                .append(live.isPresent() ? bytes(live.getAsLong()) : "not known (no layer keeps figures)")
                .append("</b>. Layers, outermost first: ")
                .append(esc(handler.layers().stream().map(l -> l.kind() + " (" + l.type() + ")")
                        .collect(Collectors.joining(", "))))
                .append(".</p>\n");
        for (LayerSnapshot.Statistics s : handler.layers(LayerSnapshot.Statistics.class)) {
            b.append("<p>Statistics: ").append(bytes(s.currentBytes())).append(" current, ")
                    .append(bytes(s.peakBytes())).append(" peak, ").append(bytes(s.allocatedBytes()))
                    .append(" allocated, ").append(bytes(s.freedBytes())).append(" freed.</p>\n");
        }
        for (LayerSnapshot.Limit l : handler.layers(LayerSnapshot.Limit.class)) {
            b.append("<p>Limit: ").append(bytes(l.inUseBytes())).append(" in use of ").append(bytes(l.limitBytes()))
                    .append(", ").append(l.refusals()).append(" refusals.</p>\n");
        }
        for (LayerSnapshot.Pool p : handler.layers(LayerSnapshot.Pool.class)) {
            pool(b, p, pools++);
        }
        List<LayerSnapshot.Tracking> tracking = handler.layers(LayerSnapshot.Tracking.class);
        if (tracking.isEmpty()) {
            b.append("<p class=\"note\">No tracking layer: no allocation sites or live blocks"
                    + " (add <code>+tracking=full</code> to the handler).</p>\n");
        } else {
            sites(b, tracking.getFirst(), index);
            blocks(b, handler.blocks(), index);
        }
        b.append("</section>\n");
        return pools;
    }

    private static void pool(StringBuilder b, LayerSnapshot.Pool p, int index) {
        b.append("<h3>Pool ").append(index).append(": <code>").append(esc(p.type())).append("</code></h3>\n<p>")
                .append(bytes(p.runByteSize())).append(" in ").append(p.runs().size()).append(" runs: ")
                .append(bytes(p.usedByteSize())).append(" used, ").append(bytes(p.freeByteSize()))
                .append(" free; largest free run ").append(bytes(p.largestFreeRunByteSize())).append("; ")
                .append(p.slabCount()).append(" slabs (").append(p.whollyFreeSlabs()).append(" wholly free); ")
                .append(p.largeBlocks().size()).append(" large blocks of ").append(bytes(p.largeByteSize()))
                .append(".</p>\n");
        List<LayerSnapshot.SizeClass> classes = p.classes();
        if (classes.isEmpty()) {
            b.append("<p class=\"note\">No size class has slabs.</p>\n");
            b.append("<svg id=\"fragmentation-").append(index).append("\" width=\"1\" height=\"1\"></svg>\n");
            return;
        }
        legend(b, new String[] {USED, FREE, UNCARVED, LARGEST},
                new String[] {"used", "free in slabs", "uncarved", "largest free run"});
        long max = classes.stream().mapToLong(LayerSnapshot.SizeClass::runByteSize).max().orElse(1);
        int label = 90;
        int width = 700;
        int right = 260;
        int rowHeight = 30;
        int height = classes.size() * rowHeight + 10;
        b.append("<svg id=\"fragmentation-").append(index).append("\" width=\"")
                .append(label + width + right).append("\" height=\"").append(height)
                .append("\" role=\"img\" aria-label=\"fragmentation per size class\">\n");
        for (int i = 0; i < classes.size(); i++) {
            LayerSnapshot.SizeClass c = classes.get(i);
            int y = 5 + i * rowHeight;
            b.append("<text x=\"").append(label - 6).append("\" y=\"").append(y + 14)
                    .append("\" text-anchor=\"end\">").append(bytes(c.byteSize())).append("</text>\n");
            double x = label;
            x = rect(b, x, y, scale(c.usedByteSize(), max, width), 18, USED,
                    "used: " + c.usedBlocks() + " blocks, " + c.usedByteSize() + " bytes");
            x = rect(b, x, y, scale(c.freeByteSize(), max, width), 18, FREE,
                    "free in slabs: " + c.freeBlocks() + " blocks, " + c.freeByteSize() + " bytes");
            rect(b, x, y, scale(c.uncarvedByteSize(), max, width), 18, UNCARVED,
                    "uncarved: " + c.uncarvedByteSize() + " bytes");
            rect(b, label, y + 20, scale(c.largestFreeRunByteSize(), max, width), 5, LARGEST,
                    "largest free run: " + c.largestFreeRunByteSize() + " bytes");
            b.append("<text x=\"").append(label + width + 8).append("\" y=\"").append(y + 14).append("\">")
                    .append(esc(percent(c.usedByteSize(), c.runByteSize()) + " used of " + bytes(c.runByteSize())
                            + ", " + c.slabs() + (c.slabs() == 1 ? " slab" : " slabs")))
                    .append("</text>\n");
        }
        b.append("</svg>\n<table class=\"classes\">\n<tr><th class=\"n\">class</th><th class=\"n\">runs</th>")
                .append("<th class=\"n\">run bytes</th><th class=\"n\">slabs</th><th class=\"n\">wholly free</th>")
                .append("<th class=\"n\">used blocks</th><th class=\"n\">free blocks</th>")
                .append("<th class=\"n\">uncarved</th><th class=\"n\">largest free run</th></tr>\n");
        for (LayerSnapshot.SizeClass c : classes) {
            b.append("<tr>");
            cells(b, bytes(c.byteSize()), Integer.toString(c.runs()), bytes(c.runByteSize()),
                    Integer.toString(c.slabs()), Integer.toString(c.whollyFreeSlabs()), Long.toString(c.usedBlocks()),
                    Long.toString(c.freeBlocks()), bytes(c.uncarvedByteSize()), bytes(c.largestFreeRunByteSize()));
            b.append("</tr>\n");
        }
        b.append("</table>\n");
    }

    private static void sites(StringBuilder b, LayerSnapshot.Tracking t, int index) {
        List<LayerSnapshot.Site> sites = t.sites();
        boolean stacks = sites.stream().anyMatch(s -> !s.frame().isEmpty());
        b.append("<h3>Top allocation sites</h3>\n");
        if (!stacks) {
            sites = t.threads();
            b.append("<p class=\"note\">The tracking layer recorded no stack traces (level <code>")
                    .append(esc(t.stackTraces()))
                    .append("</code>; use <code>+tracking=full</code>): the live bytes by thread instead.</p>\n");
        }
        if (sites.isEmpty()) {
            b.append("<p class=\"note\">No live blocks.</p>\n<svg id=\"sites-").append(index)
                    .append("\" width=\"1\" height=\"1\"></svg>\n");
            return;
        }
        List<LayerSnapshot.Site> top = sites.subList(0, Math.min(MAX_SITES, sites.size()));
        long max = top.stream().mapToLong(LayerSnapshot.Site::bytes).max().orElse(1);
        int width = 500;
        int rowHeight = 22;
        b.append("<svg id=\"sites-").append(index).append("\" width=\"")
                .append(width + 400).append("\" height=\"").append(top.size() * rowHeight + 6)
                .append("\" role=\"img\" aria-label=\"live bytes by allocation site\">\n");
        for (int i = 0; i < top.size(); i++) {
            LayerSnapshot.Site s = top.get(i);
            int y = 3 + i * rowHeight;
            double w = rect(b, 0, y, scale(s.bytes(), max, width), 16, USED, s.frame() + ": " + s.bytes() + " bytes");
            b.append("<text x=\"").append(fmt(w + 6)).append("\" y=\"").append(y + 12).append("\">")
                    .append(esc(bytes(s.bytes()) + " in " + s.blocks() + " blocks: " + shorten(frameOrNone(s.frame()))))
                    .append("</text>\n");
        }
        b.append("</svg>\n<table class=\"sites\">\n<tr><th class=\"n\">bytes</th><th class=\"n\">blocks</th><th>")
                .append(stacks ? "site" : "thread").append("</th></tr>\n");
        for (LayerSnapshot.Site s : top) {
            b.append("<tr><td class=\"n\">").append(bytes(s.bytes())).append("</td><td class=\"n\">").append(s.blocks())
                    .append("</td><td><code>").append(esc(frameOrNone(s.frame()))).append("</code></td></tr>\n");
        }
        b.append("</table>\n");
        if (sites.size() > top.size()) {
            b.append("<p class=\"note\">").append(sites.size() - top.size()).append(" more not shown.</p>\n");
        }
    }

    private static void blocks(StringBuilder b, List<LiveBlock> blocks, int index) {
        b.append("<h3>Live blocks</h3>\n");
        if (blocks.size() > MAX_BLOCKS) {
            b.append("<p class=\"note\">").append(blocks.size()).append(" live blocks: the first ").append(MAX_BLOCKS)
                    .append(" (oldest) are listed.</p>\n");
        }
        b.append("<table id=\"blocks-").append(index).append("\" class=\"blocks\">\n<tr><th>address</th>")
                .append("<th class=\"n\">size</th><th>thread</th><th class=\"n\">age</th><th>site</th>")
                .append("<th class=\"n\">page size</th><th>NUMA nodes</th></tr>\n");
        for (LiveBlock l : blocks.subList(0, Math.min(MAX_BLOCKS, blocks.size()))) {
            b.append("<tr><td><code>0x").append(Long.toHexString(l.address())).append("</code></td><td class=\"n\">")
                    .append(bytes(l.byteSize())).append("</td><td>").append(esc(l.thread())).append(" (")
                    .append(l.threadId()).append(")</td><td class=\"n\">").append(esc(age(l))).append("</td><td><code>")
                    .append(esc(frameOrNone(l.site()))).append("</code></td><td class=\"n\">")
                    .append(l.pageSize() == 0 ? "?" : bytes(l.pageSize())).append("</td><td>")
                    .append(l.nodes().isEmpty() ? "-" : esc(l.nodes().toString())).append("</td></tr>\n");
        }
        b.append("</table>\n");
        if (blocks.isEmpty()) {
            b.append("<p class=\"note\">No live blocks.</p>\n");
        }
    }

    /** The bytes in use after each operation of the log, as {@code {nanos, bytes}} pairs, from 0 at 0. */
    static List<long[]> bytesInUse(List<AllocationLog.Entry> log) {
        Map<Long, Long> live = new HashMap<>();
        List<long[]> points = new ArrayList<>(log.size() + 1);
        long bytes = 0;
        points.add(new long[] {0, 0});
        for (AllocationLog.Entry e : log) {
            switch (e.op()) {
                case MALLOC, CALLOC -> {
                    if (e.result() == 0) {
                        continue;
                    }
                    Long previous = live.put(e.result(), e.requestedBytes());
                    bytes += e.requestedBytes() - (previous == null ? 0 : previous);
                }
                case REALLOC -> {
                    if (e.result() == 0) {
                        continue;
                    }
                    Long old = e.address() == 0 ? null : live.remove(e.address());
                    bytes -= old == null ? 0 : old;
                    Long previous = live.put(e.result(), e.argument());
                    bytes += e.argument() - (previous == null ? 0 : previous);
                }
                case FREE -> {
                    Long old = live.remove(e.address());
                    bytes -= old == null ? 0 : old;
                }
            }
            points.add(new long[] {e.nanos(), bytes});
        }
        return points;
    }

    private static void bytesOverTime(StringBuilder b, List<AllocationLog.Entry> log, String logName) {
        b.append("<h2>Bytes in use over time</h2>\n<p>From the allocation log <code>").append(esc(logName))
                .append("</code>: ").append(log.size()).append(" operations.</p>\n");
        List<long[]> points = bytesInUse(log);
        long end = Math.max(1, points.stream().mapToLong(p -> p[0]).max().orElse(1));
        long peak = Math.max(1, points.stream().mapToLong(p -> p[1]).max().orElse(1));
        int left = 80;
        int width = 800;
        int height = 240;
        int top = 10;
        b.append("<svg id=\"bytes-over-time\" width=\"").append(left + width + 20)
                .append("\" height=\"").append(top + height + 30)
                .append("\" role=\"img\" aria-label=\"bytes in use over time\">\n");
        b.append("<line x1=\"").append(left).append("\" y1=\"").append(top + height).append("\" x2=\"")
                .append(left + width).append("\" y2=\"").append(top + height).append("\" stroke=\"#888\"/>\n");
        b.append("<line x1=\"").append(left).append("\" y1=\"").append(top).append("\" x2=\"").append(left)
                .append("\" y2=\"").append(top + height).append("\" stroke=\"#888\"/>\n");
        b.append("<text x=\"").append(left - 6).append("\" y=\"").append(top + 10).append("\" text-anchor=\"end\">")
                .append(bytes(peak)).append("</text>\n<text x=\"").append(left - 6).append("\" y=\"")
                .append(top + height).append("\" text-anchor=\"end\">0</text>\n");
        b.append("<text x=\"").append(left).append("\" y=\"").append(top + height + 20).append("\">0 ms</text>\n")
                .append("<text x=\"").append(left + width).append("\" y=\"").append(top + height + 20)
                .append("\" text-anchor=\"end\">").append(esc(String.format(Locale.ROOT, "%.3f ms", end / 1e6)))
                .append("</text>\n");
        int step = Math.max(1, points.size() / MAX_POINTS);
        b.append("<polyline fill=\"none\" stroke=\"").append(USED).append("\" stroke-width=\"2\" points=\"");
        long previousBytes = 0;
        for (int i = 0; i < points.size(); i += step) {
            long[] p = points.get(i);
            double x = left + (double) p[0] * width / end;
            // a step: the bytes stay until the next operation
            b.append(fmt(x)).append(',').append(fmt(top + height - (double) previousBytes * height / peak)).append(' ');
            b.append(fmt(x)).append(',').append(fmt(top + height - (double) p[1] * height / peak)).append(' ');
            previousBytes = p[1];
        }
        b.append("\"/>\n</svg>\n<p class=\"note\">Peak ").append(bytes(peak)).append("; at the log's end ")
                .append(bytes(points.getLast()[1])).append(" in use.</p>\n");
    }

    // ---------------------------------------------------------------------------------------------

    private static void legend(StringBuilder b, String[] colours, String[] names) {
        b.append("<p class=\"legend\">");
        for (int i = 0; i < colours.length; i++) {
            b.append("<span style=\"background:").append(colours[i]).append("\"></span>").append(esc(names[i]));
        }
        b.append("</p>\n");
    }

    private static double rect(StringBuilder b, double x, double y, double w, double h, String fill, String title) {
        if (w > 0) {
            b.append("<rect x=\"").append(fmt(x)).append("\" y=\"").append(fmt(y)).append("\" width=\"").append(fmt(w))
                    .append("\" height=\"").append(fmt(h)).append("\" fill=\"").append(fill).append("\"><title>")
                    .append(esc(title)).append("</title></rect>\n");
        }
        return x + w;
    }

    private static double scale(long value, long max, int width) {
        if (value <= 0 || max <= 0) {
            return 0;
        }
        return Math.max(1, (double) value * width / max);
    }

    private static void row(StringBuilder b, String name, String html) {
        b.append("<tr><th>").append(esc(name)).append("</th><td>").append(html).append("</td></tr>\n");
    }

    private static void cells(StringBuilder b, String... values) {
        for (String v : values) {
            b.append("<td class=\"n\">").append(esc(v)).append("</td>");
        }
    }

    private static String frameOrNone(String frame) {
        return frame.isEmpty() ? "(no stack trace)" : frame;
    }

    private static String shorten(String s) {
        return s.length() <= 90 ? s : "..." + s.substring(s.length() - 87);
    }

    private static String age(LiveBlock l) {
        return String.format(Locale.ROOT, "%.3f s", l.age().toNanos() / 1e9);
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "0%" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    /** Bytes with a binary unit: {@code 512 B}, {@code 8.0 KiB}, {@code 1.5 MiB}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** The text with {@code & < > " '} escaped, for HTML text and attribute values. */
    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }
}
