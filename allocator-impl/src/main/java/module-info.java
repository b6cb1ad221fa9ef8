import io.datamem.impl.internal.AlignedProvider;
import io.datamem.impl.internal.HugePagesProvider;
import io.datamem.impl.internal.NumaProvider;
import io.datamem.impl.internal.PoolProvider;
import io.datamem.impl.internal.FaultsProvider;
import io.datamem.impl.internal.GuardProvider;
import io.datamem.impl.internal.JfrProvider;
import io.datamem.impl.internal.LimitProvider;
import io.datamem.impl.internal.LogProvider;
import io.datamem.impl.internal.StatsProvider;
import io.datamem.impl.internal.TrackingProvider;

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

    exports io.datamem.impl;
    exports io.datamem.impl.micrometer;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, StatsProvider,
            HugePagesProvider, NumaProvider, PoolProvider,
            TrackingProvider,
            LimitProvider,
            GuardProvider,
            LogProvider,
            FaultsProvider,
            JfrProvider;
}
