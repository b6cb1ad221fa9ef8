package io.datamem.impl.internal.snapshot;

import io.datamem.impl.snapshot.MemorySnapshots;
import io.datamem.internal.HandlerWatcher;

/**
 * Registers the memory-snapshot MBean ({@link MemorySnapshots#register()}) when the JVM builds its
 * first handler, unless {@code -Ddatamem.jmx=false}. A service, not for direct use: allocator-impl
 * provides it, and allocator-api's handler registry calls it once.
 *
 * <p>The registration runs on a daemon thread of its own, {@value #THREAD_NAME}: starting the
 * platform MBean server takes a few hundred milliseconds in a JVM that has not used JMX, which the
 * first handler should not wait for. A client that attaches in the moment after the first handler
 * is built may find the MBean not registered yet; {@code datamem snapshot --pid} waits for it a
 * little.
 */
public final class SnapshotMBeanWatcher implements HandlerWatcher {

    /** The name of the thread that registers the MBean. */
    public static final String THREAD_NAME = "datamem-snapshot-mbean";

    /** The instance {@link java.util.ServiceLoader} makes. */
    public SnapshotMBeanWatcher() {
    }

    /** Starts the thread that registers the MBean, unless the property turns it off. */
    @Override
    public void firstHandler() {
        if (!MemorySnapshots.enabled()) {
            return;   // no thread at all
        }
        Thread.ofPlatform().daemon().name(THREAD_NAME).start(SnapshotMBeanWatcher::register);
    }

    private static void register() {
        try {
            MemorySnapshots.register();
        } catch (RuntimeException | LinkageError e) {
            System.getLogger(SnapshotMBeanWatcher.class.getName()).log(System.Logger.Level.WARNING,
                    "datamem: the memory-snapshot MBean " + MemorySnapshots.OBJECT_NAME + " is not registered: " + e, e);
        }
    }
}
