package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The conformance suite against explicit 2 MiB huge pages ({@code hugepages:2m}, no fallback), with
 * 16 pages reserved for the run when running as root (restored afterwards).
 */
@Tag("hugepages")
class ExplicitHugePages2mConformanceTest extends AllocatorConformanceTest {

    private static HugePageReservation reservation;

    @BeforeAll
    static void reserve() {
        reservation = HugePageReservation.reserve(2L << 20, 16);
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
        return DataMem.createHandler("hugepages:2m").allocator();
    }

    @Override
    protected String handlerName() {
        return "hugepages:2m";
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        HugePageAllocator a = (HugePageAllocator) allocator;
        org.junit.jupiter.api.Assertions.assertEquals(0, a.liveMappings(), "every mapping unmapped");
        org.junit.jupiter.api.Assertions.assertEquals(0, a.fallbacks(), "no fallback with fallback=fail");
    }
}
