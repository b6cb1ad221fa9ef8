package io.datamem.benchmarks.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes {@code docs/performance.md} from JMH's results: tables of ns/op with their error, ratios
 * against every peer measured in the same run, the goals met or missed with the figures and the
 * reasons, the machine, and PNG charts.
 *
 * <p>The prose lives in a template ({@code performance.md} next to this class); the generator fills
 * its {@code {{name}}} slots, each with what one section class renders (see {@link #render}). This
 * class holds the goals' targets and the shape of the run they are judged on.
 */
public final class Report {

    /** The block sizes of the allocation benchmarks, in bytes. */
    public static final List<Long> SIZES = List.of(16L, 64L, 256L, 4096L, 65536L, 1L << 20, 16L << 20);

    /** Goal: the default handler within this factor of the C baseline. */
    public static final double DEFAULT_VS_C = 1.3;
    /** Goal: each exchange (a DLPack export + import round trip, a {@code Py_buffer} request) at most this many ns. */
    public static final double EXCHANGE_NS = 200.0;
    /** Goal: a UCX shared-memory put of 64 MiB at least this share of memcpy's bandwidth. */
    public static final double UCX_PUT_VS_MEMCPY = 0.5;
    /** Goal: a UCX put at least this many times as fast as a socket copy, at every size from 64 KiB. */
    public static final double UCX_PUT_VS_SOCKET = 2.0;
    /** Goal: a cached UCX registration at most this many ns. */
    public static final double UCX_CACHED_REGISTRATION_NS = 1000.0;
    /** Goal: a cached open of a shared-memory IPC handle at most this many ns. */
    public static final double IPC_OPEN_NS = 1000.0;
    /** Goal: a pair through an exported NEP 49 handler at most this factor of the Java pair, plus its crossings. */
    public static final double UPCALL_PAIR_VS_JAVA = 2.0;
    /** Goal: {@code DataMem.current()} under this many ns. */
    public static final double CURRENT_NS = 2.0;
    /** Goal: {@code +stats} adds at most this many ns per pair. */
    public static final double STATS_NS = 10.0;
    /** Goal: the Micrometer binder adds at most this many ns per pair over {@code +stats}. */
    public static final double MICROMETER_NS = 15.0;
    /** Goal: pool(aligned64) faster than the C glibc loop at every size up to this many bytes. */
    public static final long POOL_VS_C_MAX_SIZE = 65536;
    /** Goal: on more threads, pool(aligned64)'s per-pair cost at most this factor of its 1-thread cost. */
    public static final double POOL_THREADS_VS_ONE = 1.2;
    /** Goal: aligned64 at most this factor of default_allocator at every size. */
    public static final double ALIGNED_VS_DEFAULT = 1.3;
    /** Goal: pool(aligned64)'s peak resident memory on the mixed-size trace at most this factor of glibc's. */
    public static final double POOL_RSS_VS_GLIBC = 1.2;
    /** Goal: transparent huge pages at least this much faster on random access over 4 GiB. */
    public static final double THP_SPEEDUP = 1.3;
    /** Goal: pool(aligned64) faster than default_allocator and the Java peers at every size up to this many bytes. */
    public static final long POOL_MAX_SIZE = 1L << 20;
    /** Goal: the written-array lifecycle on default_allocator at most this factor of NumPy's. */
    public static final double ARRAY_VS_NUMPY = 0.25;
    /** Goal: an element accessor at most this factor of raw {@code MemorySegment} access. */
    public static final double ACCESS_VS_SEGMENT = 1.5;
    /** Goal: each thread's lifecycle on 2 threads at most this factor of the 1-thread lifecycle. */
    public static final double TWO_THREADS_VS_ONE = 1.3;
    /** The forks a goal's figures must come from before it gets a verdict (allocation and array goals). */
    public static final int VERDICT_FORKS = 3;

    /** The handlers of the array lifecycle runs. */
    static final List<String> ARRAY_HANDLERS = List.of("default_allocator", "aligned64", "pool(aligned64)");
    /** The float64 lengths of the array lifecycle runs: 64 B and 1 MiB. */
    static final List<Long> ARRAY_ELEMENTS = List.of(8L, 131072L);

    /**
     * How the run went: what ran, when, and how busy the machine was.
     *
     * @param profile   {@code quick} or {@code full}
     * @param command   the command that reproduces the run
     * @param started   when the command started (the build included)
     * @param finished  when the last benchmark finished
     * @param loadBefore the load average (1, 5, 15 minutes) before the benchmarks
     * @param loadAfter  the load average after
     * @param threads   the thread count of the multi-threaded runs
     * @param notes     facts the benchmarks recorded ({@code key<TAB>value})
     */
    public record Run(String profile, String command, Instant started, Instant finished, String loadBefore,
                      String loadAfter, int threads, List<String> notes) {

        /**
         * Validates and copies.
         *
         * @throws NullPointerException if a reference is null
         */
        public Run {
            Objects.requireNonNull(profile, "profile");
            Objects.requireNonNull(command, "command");
            Objects.requireNonNull(started, "started");
            Objects.requireNonNull(finished, "finished");
            Objects.requireNonNull(loadBefore, "loadBefore");
            Objects.requireNonNull(loadAfter, "loadAfter");
            notes = List.copyOf(notes);
        }

        /**
         * How long the command took.
         *
         * @return the wall time from start to finish
         */
        public Duration elapsed() {
            return Duration.between(started, finished);
        }
    }

    /**
     * A rendered page.
     *
     * @param markdown the page
     * @param charts   the chart files written, by name
     */
    public record Page(String markdown, List<String> charts) {

        /**
         * Copies.
         *
         * @throws NullPointerException if an argument is null
         */
        public Page {
            Objects.requireNonNull(markdown, "markdown");
            charts = List.copyOf(charts);
        }
    }

    /**
     * Renders the page and writes its charts.
     *
     * @param results   the results of the run
     * @param machine   the machine
     * @param run       how the run went
     * @param chartDir  where the PNG charts go
     * @param chartLink the path of {@code chartDir} relative to the page
     * @return the Markdown page and the charts written
     * @throws UncheckedIOException if a chart cannot be written
     */
    public static Page render(List<Result> results, Machine machine, Run run, Path chartDir, String chartLink) {
        PageInput in = new PageInput(results, machine, run, chartDir, chartLink);
        String page = render(in);
        return new Page(page, in.charts());
    }

    /** Fills every slot of the template, in the order the page reads (the charts are written in it). */
    private static String render(PageInput in) {
        RunSection runSection = new RunSection(in);
        AllocationSection allocation = new AllocationSection(in);
        TraceSection trace = new TraceSection(in);
        InterchangeSection interchange = new InterchangeSection(in);
        Map<String, String> slots = new LinkedHashMap<>();
        slots.put("command", in.run().command());
        slots.put("fullCommand", "benchmarks/run --full");
        slots.put("generated", runSection.generated());
        slots.put("machine", in.machine().markdown() + runSection.load());
        slots.put("goals", new GoalsSection(in).goals());
        slots.put("alloc1", allocation.allocation(1));
        slots.put("allocThreads", allocation.threadedAllocation());
        slots.put("trace", trace.trace());
        slots.put("rss", trace.rss());
        slots.put("current", new CurrentSection(in).current());
        slots.put("exchanges", interchange.exchanges());
        slots.put("ipc", interchange.ipc());
        slots.put("ucx", new UcxSection(in).ucx());
        slots.put("stats", new StatisticsSection(in).statistics());
        slots.put("hugepages", new HugePagesSection(in).hugePages());
        slots.put("streaming", new StreamingSection(in).streaming());
        slots.put("arrays", new ArraysSection(in).arrays());
        slots.put("access", new AccessSection(in).access());
        slots.put("compute", new ComputeSection(in).section());
        slots.put("notes", runSection.notes());
        return fill(template(), slots);
    }

    /** The page's template, {@code performance.md} beside this class. */
    static String template() {
        try (InputStream in = Report.class.getResourceAsStream("performance.md")) {
            if (in == null) {
                throw new IllegalStateException("the report template performance.md is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The template with every {@code {{name}}} replaced by its value, taken literally.
     *
     * @throws IllegalArgumentException if a slot has no value
     */
    static String fill(String template, Map<String, String> slots) {
        Matcher m = Pattern.compile("\\{\\{(\\w+)}}").matcher(template);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String v = slots.get(m.group(1));
            if (v == null) {
                throw new IllegalArgumentException("template slot {{" + m.group(1) + "}} has no value");
            }
            m.appendReplacement(b, Matcher.quoteReplacement(v));
        }
        m.appendTail(b);
        return b.toString();
    }

    private Report() {
    }
}
