package io.datamem.impl.adaptor;

import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.AllocatorStack;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against every adaptor over {@code default_allocator} and {@code aligned64},
 * and against stacks of adaptors in several orders, all resolved by handler name. After each test,
 * every layer's books must balance: no bytes in use, no live block, no violation.
 */
@ParameterizedClass(name = "{0}")
@MethodSource("names")
class AdaptorConformanceTest extends AllocatorConformanceTest {

    // Limits above 2^50 (the suite's exhausting size) so that exhaustion reaches the leaf.
    private static final String BIG_LIMIT = "limit=2048t";

    @TempDir
    static Path logs;

    private final String name;

    AdaptorConformanceTest(String name) {
        this.name = name;
    }

    static List<String> names() {
        List<String> names = new ArrayList<>();
        for (String leaf : List.of("default_allocator", "aligned64")) {
            for (String adaptor : List.of("stats", "tracking", "tracking=full", "tracking=off", BIG_LIMIT, "guard",
                    "guard=record", "log=LOG", "faults=every:1000000000", "faults=random:0:7", "jfr")) {
                names.add(leaf + "+" + adaptor);
            }
        }
        names.add("aligned64+stats+tracking+guard");
        names.add("default_allocator+guard+tracking+stats");
        names.add("aligned64+jfr+guard+stats+" + BIG_LIMIT + "+tracking=full");
        names.add("default_allocator+" + BIG_LIMIT + "+faults=nth:99999999+log=LOG+guard+jfr+stats+tracking");
        names.add("aligned:4096+guard+stats");
        return names;
    }

    private String resolvedName() {
        return name.replace("log=LOG", "log=" + logs.resolve(Integer.toHexString(name.hashCode()) + ".log"));
    }

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.createHandler(resolvedName()).allocator();
    }

    @Override
    protected String handlerName() {
        return name.replace("log=LOG", "log");
    }

    @Override
    protected int operationsPerThread() {
        return name.contains("guard") || name.contains("log") ? 1000 : 2000;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        for (DataMemAllocator layer : AllocatorStack.layers(allocator)) {
            switch (layer) {
                case StatisticsAdaptorImpl s -> {
                    assertEquals(0, s.currentBytes(), "stats: bytes in use after the test");
                    assertEquals(s.allocations(), s.frees(), "stats: every allocation freed");
                    assertEquals(s.allocatedBytes(), s.freedBytes(), "stats: bytes balance");
                }
                case TrackingAdaptor t -> {
                    assertEquals(List.of(), t.liveAllocations(), "tracking: live blocks after the test");
                    assertEquals(List.of(), t.problems(), "tracking: refused operations");
                }
                case GuardAdaptor g -> {
                    assertEquals(List.of(), g.check(), "guard: corruption found by check()");
                    g.drainQuarantine();
                    assertEquals(List.of(), g.violations(), "guard: violations");
                    assertEquals(0, g.liveCount(), "guard: live blocks");
                }
                case LimitingAdaptor l -> assertEquals(0, l.snapshot().inUseBytes(), "limit: bytes reserved after the test");
                case LoggingAdaptor log -> log.close();
                default -> {
                }
            }
        }
    }
}
