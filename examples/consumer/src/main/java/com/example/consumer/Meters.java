package com.example.consumer;

import io.datamem.DataMemHandler;
import io.datamem.impl.micrometer.DataMemMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** A handler's statistics through Micrometer: the only class of the program that uses Micrometer. */
final class Meters {

    private Meters() {
    }

    /**
     * Prints a handler's main meters, read from a Micrometer registry.
     *
     * @param handler a handler with {@code +stats}
     */
    static void print(DataMemHandler handler) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (DataMemMetrics metrics = DataMemMetrics.of(handler)) {
            metrics.bindTo(registry);
            FunctionCounter allocations = registry.get("datamem.allocations").functionCounter();
            Gauge peak = registry.get("datamem.memory.peak").gauge();
            Gauge used = registry.get("datamem.memory.used").gauge();
            System.out.printf("consumer: Micrometer %s: datamem.allocations %.0f, datamem.memory.peak %.0f bytes,"
                    + " datamem.memory.used %.0f bytes%n", SimpleMeterRegistry.class.getPackage()
                    .getImplementationVersion(), allocations.count(), peak.value(), used.value());
        } finally {
            registry.close();
        }
    }
}
