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
        assertEquals(64L << 20, AllocatorStack.find(all, LimitingAdaptor.class).orElseThrow().limitBytes());
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
