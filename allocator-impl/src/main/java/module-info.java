import io.datamem.impl.internal.adaptor.AdaptorProviders;
import io.datamem.impl.internal.cpu.AlignedProvider;
import io.datamem.impl.internal.placement.HugePagesProvider;
import io.datamem.impl.internal.placement.NumaProvider;
import io.datamem.impl.internal.pool.PoolProvider;
import io.datamem.impl.internal.cpu.SharedProvider;

/**
 * datamem's CPU backends and adaptors.
 *
 * <p>Three dependencies are optional ({@code requires static}): the module resolves, links into a
 * {@code jlink} image and works without them, and only the features that use them need them.
 * <ul>
 *   <li>LWJGL's hwloc binding ({@code org.lwjgl.hwloc}, with {@code org.lwjgl.hwloc.natives} and
 *       {@code org.lwjgl.natives} for the bundled libraries): the {@code numa} handlers and
 *       {@code NumaTopology}. On the module path, resolve them with
 *       {@code --add-modules org.lwjgl.hwloc,org.lwjgl.hwloc.natives,org.lwjgl.natives} or by
 *       requiring them from the application's module;</li>
 *   <li>{@code jdk.jfr}: the {@code jfr} adaptor ({@code --add-modules jdk.jfr} on the module path);</li>
 *   <li>Micrometer ({@code micrometer.core}): only {@code io.datamem.impl.micrometer}; a module
 *       using that package requires {@code micrometer.core} itself.</li>
 * </ul>
 * Without them, the handler names that need them are unavailable and say which module to add.
 */
module io.datamem.impl {
    requires transitive io.datamem.api;
    requires static org.lwjgl.hwloc;
    requires static org.lwjgl.hwloc.natives;
    requires static org.lwjgl.natives;
    requires static jdk.jfr;
    requires static micrometer.core;
    requires java.management;   // the memory-snapshot MBean (io.datamem.impl.snapshot.MemorySnapshots)

    exports io.datamem.impl;
    exports io.datamem.impl.adaptor;
    exports io.datamem.impl.placement;
    exports io.datamem.impl.pool;
    exports io.datamem.impl.micrometer;
    exports io.datamem.impl.snapshot;
    exports io.datamem.impl.shared;
    // plumbing the device backends share (LiveBlocks); not an API
    exports io.datamem.impl.os to io.datamem.cuda, io.datamem.sycl;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, AdaptorProviders.Stats,
            HugePagesProvider, NumaProvider, PoolProvider,
            AdaptorProviders.Tracking,
            AdaptorProviders.Limit,
            AdaptorProviders.Guard,
            AdaptorProviders.Log,
            AdaptorProviders.Faults,
            AdaptorProviders.Jfr,
            SharedProvider;
    provides io.datamem.internal.FailureDiagnostics with io.datamem.impl.internal.snapshot.FailureSnapshots;
    provides io.datamem.internal.HandlerWatcher with io.datamem.impl.internal.snapshot.SnapshotMBeanWatcher;
}
