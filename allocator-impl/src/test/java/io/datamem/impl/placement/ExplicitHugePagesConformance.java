package io.datamem.impl.placement;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against one size of explicit huge pages with no fallback, with pages
 * reserved for the run when running as root (restored afterwards); skipped, saying why, when they
 * cannot be reserved.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ExplicitHugePagesConformance extends AllocatorConformanceTest {

    private final String handler;
    private final long pageSize;
    private final int pages;
    private HugePageReservation reservation;

    ExplicitHugePagesConformance(String handler, long pageSize, int pages) {
        this.handler = handler;
        this.pageSize = pageSize;
        this.pages = pages;
    }

    @BeforeAll
    void reserve() {
        reservation = HugePageReservation.reserve(pageSize, pages);
    }

    /** Skips each test, counted as skipped, when no pages could be reserved. */
    @BeforeEach
    void needReservedPages() {
        Assumptions.assumeTrue(reservation.skipReason() == null, () -> "skipped: " + reservation.skipReason());
    }

    @AfterAll
    void restore() {
        if (reservation != null) {
            reservation.close();
        }
    }

    @Override
    protected DataMemAllocator allocator() {
        return DataMem.createHandler(handler).allocator();
    }

    @Override
    protected String handlerName() {
        return handler;
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        HugePageAllocatorImpl a = (HugePageAllocatorImpl) allocator;
        assertEquals(0, a.snapshot().mappings().size(), "every mapping unmapped");
        assertEquals(0, a.fallbacks(), "no fallback with fallback=fail");
    }
}
