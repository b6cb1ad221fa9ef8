package io.datamem.impl.jmx;

import io.datamem.impl.snapshot.MemorySnapshots;
import io.datamem.internal.HandlerWatcher;

/**
 * Registers the memory-snapshot MBean ({@link MemorySnapshots#register()}) when the JVM builds its
 * first handler, unless {@code -Ddatamem.jmx=false}. A service, not for direct use: allocator-impl
 * provides it, and allocator-api's handler registry calls it once.
 */
public final class SnapshotMBeanWatcher implements HandlerWatcher {

    /** The instance {@link java.util.ServiceLoader} makes. */
    public SnapshotMBeanWatcher() {
    }

    /**
     * Registers the MBean.
     *
     * @throws IllegalStateException if the platform MBean server refuses it (logged by the caller)
     */
    @Override
    public void firstHandler() {
        MemorySnapshots.register();
    }
}
