package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against explicit 1 GiB huge pages ({@code hugepages:1g}, no fallback), with
 * one page reserved for the run when running as root (restored afterwards). Every block of 4 MiB or
 * more takes a whole 1 GiB page, and the suite never holds two at once.
 */
@Tag("hugepages")
class ExplicitHugePages1gConformanceTest extends AllocatorConformanceTest {

    private static HugePageReservation reservation;

    @BeforeAll
    static void reserve() {
        reservation = HugePageReservation.reserve(1L << 30, 1);
        Assumptions.assumeTrue(reservation.skipReason() == null, () -> "skipped: " + reservation.skipReason());
    }

    @AfterAll
    static void restore() {
        if (reservation != null) {
            reservation.close();
        }
    }

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.createHandler("hugepages:1g").allocator();
    }

    @Override
    protected String handlerName() {
        return "hugepages:1g";
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        HugePageAllocator a = (HugePageAllocator) allocator;
        assertEquals(0, a.liveMappings(), "every mapping unmapped");
        assertEquals(0, a.fallbacks(), "no fallback with fallback=fail");
    }
}
