package io.datamem.impl;

import io.datamem.impl.internal.adaptor.JfrEventAdaptor;
import io.datamem.impl.internal.adaptor.LimitingAdaptorImpl;
import io.datamem.impl.internal.adaptor.StatisticsAdaptorImpl;
import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.FailureInjectingAdaptor;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.LimitingAdaptor;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Adaptor provider names, their arguments and mistakes, and the composition builder. */
class AdaptorNamesTest {

    private static List<Class<?>> types(DataMemAllocator top) {
        return AllocatorStack.layers(top).stream().<Class<?>>map(Object::getClass).toList();
    }

    @Test
    void namesBuildStacksInTheOrderWritten() {
        DataMemHandler h = DataMem.createHandler("aligned64+stats+tracking+guard");
        assertEquals(List.of(GuardAdaptorImpl.class, TrackingAdaptorImpl.class, StatisticsAdaptorImpl.class,
                        AlignedAllocator.class),
                types(h.allocator()));
        DataMemHandler all = DataMem.createHandler(
                "default_allocator+limit=64m+faults=every:3+tracking=full+guard=record+jfr+stats");
        assertEquals(64L << 20, AllocatorStack.find(all, LimitingAdaptor.class).orElseThrow().snapshot().limitBytes());
        assertEquals(TrackingAdaptorImpl.StackTraces.FULL,
                AllocatorStack.find(all, TrackingAdaptorImpl.class).orElseThrow().stackTraces());
        assertEquals(GuardAdaptorImpl.OnViolation.RECORD,
                AllocatorStack.find(all, GuardAdaptorImpl.class).orElseThrow().onViolation());
        assertEquals(all.name(), AllocatorStack.find(all, JfrEventAdaptor.class).orElseThrow().handlerName());
        assertTrue(AllocatorStack.find(all, FailureInjectingAdaptor.class).orElseThrow().toString().contains("every:3"));
        assertTrue(AllocatorStack.find(h, LimitingAdaptor.class).isEmpty());
    }

    @Test
    void malformedAdaptorTermsSayWhatWasExpected() {
        assertMessage("aligned64+limit", "expected: limit=BYTES, for example limit=1048576 or limit=64m");
        assertMessage("aligned64+limit=lots", "expected: limit=BYTES");
        assertMessage("aligned64+tracking=most", "expected: tracking, or tracking=off, tracking=sampled or tracking=full");
        assertMessage("aligned64+guard=maybe", "expected: guard or guard=record");
        assertMessage("aligned64+faults=often", "expected: nth:N, every:N, random:P or random:P:SEED");
        assertMessage("aligned64+faults", "expected: faults=nth:N, faults=every:N or faults=random:P[:SEED]");
        assertMessage("aligned64+jfr=on", "expected: jfr, without arguments");
        assertMessage("aligned64+stats=x", "expected: stats, without arguments");
        assertMessage("guard", "is an adaptor; put a leaf allocator first, as in aligned64+guard");
        String unknown = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+magic"))
                .getMessage();
        assertTrue(unknown.contains("adaptors after '+': stats, tracking, limit, guard, log, faults, jfr"),
                "the list of available families has every adaptor: " + unknown);
        String typo = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+stat"))
                .getMessage();
        assertTrue(typo.contains("no provider accepts 'stat' as an adaptor; did you mean stats?"), typo);
        String options = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+limt=1g"))
                .getMessage();
        assertTrue(options.contains("did you mean limit=1g?"), "the options as written, the family corrected: "
                + options);
    }

    @Test
    void theGuardsRedZoneQuarantineAndActionAreOptionsOfItsTerm() {
        DataMemHandler h = DataMem.createHandler("aligned64+stats+guard:record,redzone=256,quarantine=0");
        GuardAdaptorImpl g = AllocatorStack.find(h, GuardAdaptorImpl.class).orElseThrow();
        GuardAdaptorImpl plain = AllocatorStack.find(DataMem.createHandler("aligned64+guard"), GuardAdaptorImpl.class)
                .orElseThrow();
        assertEquals(GuardAdaptorImpl.OnViolation.RECORD, g.onViolation());
        assertEquals(256 - GuardAdaptorImpl.DEFAULT_RED_ZONE_BYTES, g.overheadBytes() - plain.overheadBytes(),
                "the red zone is 256 bytes instead of the default");
        StatisticsAdaptor below = AllocatorStack.find(h, StatisticsAdaptor.class).orElseThrow();
        java.lang.foreign.MemorySegment p = h.allocator().malloc(100);
        // an overrun 200 bytes past the end: outside the default red zone, inside this one
        p.reinterpret(301).set(java.lang.foreign.ValueLayout.JAVA_BYTE, 300, (byte) 7);
        assertEquals(List.of(io.datamem.impl.adaptor.Misuse.Kind.OVERRUN),
                g.check().stream().map(io.datamem.impl.adaptor.Misuse::kind).toList());
        h.allocator().free(p, 100);
        assertEquals(0, below.figures().currentBytes(), "quarantine=0 sends a freed block upstream at once");

        DataMemHandler kept = DataMem.createHandler("aligned64+stats+guard:quarantine=1m");
        java.lang.foreign.MemorySegment q = kept.allocator().malloc(100);
        kept.allocator().free(q, 100);
        StatisticsAdaptor keptStats = AllocatorStack.find(kept, StatisticsAdaptor.class).orElseThrow();
        assertTrue(keptStats.figures().currentBytes() > 0, "a 1 MiB quarantine keeps the freed block");
        assertEquals(1, AllocatorStack.find(kept, GuardAdaptor.class).orElseThrow().drainQuarantine());
        assertEquals(0, keptStats.figures().currentBytes());
        assertEquals(GuardAdaptorImpl.OnViolation.THROW, AllocatorStack.find(DataMem.createHandler(
                "aligned64+guard:throw,redzone=1k"), GuardAdaptorImpl.class).orElseThrow().onViolation());

        String expected = "expected: guard or guard=record; options throw or record, redzone=BYTES (1 to 4096)";
        assertMessage("aligned64+guard:redzone=0", "'guard:redzone=0': redzone=0 is empty");
        assertMessage("aligned64+guard:redzone=8k", expected);
        assertMessage("aligned64+guard:redzone=8k", "'8k'");
        assertMessage("aligned64+guard:quarantine=-1", expected);
        assertMessage("aligned64+guard:record,throw", expected);
        assertMessage("aligned64+guard:redzone", expected);
        assertMessage("aligned64+guard:redzone=64,redzone=128", expected);
        assertMessage("aligned64+guard:record=yes", expected);
        assertMessage("aligned64+guard(aligned64)", expected);
    }

    @Test
    void theTrackingSampleIntervalIsAnOptionOfItsTerm() {
        DataMemHandler every = DataMem.createHandler("aligned64+tracking:sample=1");
        TrackingAdaptorImpl t = AllocatorStack.find(every, TrackingAdaptorImpl.class).orElseThrow();
        assertEquals(TrackingAdaptorImpl.StackTraces.SAMPLED, t.stackTraces(), "sample=N implies sampled");
        for (int i = 0; i < 20; i++) {
            java.lang.foreign.MemorySegment p = every.allocator().malloc(16);
            assertTrue(!t.liveAllocations().getFirst().stack().isEmpty(), "one stack trace in 1 allocation");
            every.allocator().free(p, 16);
        }
        assertEquals(TrackingAdaptorImpl.StackTraces.SAMPLED, AllocatorStack.find(DataMem.createHandler(
                "aligned64+tracking=sampled,sample=64"), TrackingAdaptorImpl.class).orElseThrow().stackTraces());
        String expected = "expected: tracking, or tracking=off, tracking=sampled or tracking=full;"
                + " sample=N (N >= 1) only with sampled";
        assertMessage("aligned64+tracking:full,sample=4", "sample=4 with full, which samples nothing");
        assertMessage("aligned64+tracking:off,sample=4", "sample=4 with off, which samples nothing");
        assertMessage("aligned64+tracking:sample=0", expected);
        assertMessage("aligned64+tracking:sample=lots", expected);
        assertMessage("aligned64+tracking:sample", expected);
        assertMessage("aligned64+tracking:sampled,full", expected);
        assertMessage("aligned64+tracking:sample=2,sample=3", expected);
    }

    @Test
    void anAdaptorRefusesAHandlerInParenthesesInsteadOfIgnoringIt() {
        // found by HandlerNameFuzzTest: limit(shared)2g was a 2 GiB limit, "(shared)" ignored
        assertMessage("pool(shared)+limit(shared)2g", "'limit(shared)2g' (expected: limit=BYTES (suffix k, m, g, t:"
                + " powers of 1024); an adaptor takes no handler in parentheses: it wraps the terms before it, as in"
                + " aligned64+limit)");
        assertEquals("aligned64+limit=2g", DataMem.createHandler("aligned64+limit=2g").name());
    }

    @Test
    void aFaultsSpecOfEmptyPartsIsRefused() {
        // found by HandlerNameFuzzTest: faults=: threw ArrayIndexOutOfBoundsException
        assertMessage("aligned64+faults=:", "faults: ':' (expected: nth:N, every:N, random:P or random:P:SEED)");
        assertMessage("aligned64+faults=nth:5:", "faults: 'nth:5:' (expected: nth:N, every:N");
        assertEquals("aligned64+faults=nth:5", DataMem.createHandler("aligned64+faults=nth:5").name());
    }

    private static void assertMessage(String name, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler(name));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void theBuilderStacksFunctionsAndTermsInOrder() {
        AlignedAllocator leaf = AlignedAllocator.of(128);
        DataMemHandler h = AllocatorStack.on(leaf)
                .with(StatisticsAdaptorImpl::of)
                .with(up -> LimitingAdaptorImpl.of(up, 1 << 20))
                .with("tracking=off+guard")
                .handler("mine");
        assertEquals("mine", h.name());
        assertEquals(List.of(GuardAdaptorImpl.class, TrackingAdaptorImpl.class, LimitingAdaptorImpl.class,
                StatisticsAdaptorImpl.class, AlignedAllocator.class), types(h.allocator()));
        assertSame(leaf, AllocatorStack.layers(h.allocator()).getLast());
        assertEquals(128, h.traits().byteAlignment(), "adaptors keep the leaf's traits");
        assertInstanceOf(StatisticsAdaptor.class, AllocatorStack.on("aligned64").with("stats").build());
        assertThrows(IllegalArgumentException.class, () -> AllocatorStack.on(leaf).with("aligned64").build());
        assertThrows(IllegalArgumentException.class, () -> AllocatorStack.on(leaf).with("stats+").build());
        assertThrows(IllegalStateException.class, () -> AllocatorStack.on(leaf).with(up -> null).build());
        assertThrows(IllegalArgumentException.class, () -> AllocatorStack.on(leaf).handler(" "));
    }
}
