import io.datamem.impl.internal.AlignedProvider;
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
 * <p>Micrometer is optional ({@code requires static}): only {@code io.datamem.impl.micrometer} uses
 * it; a module using that package requires {@code micrometer.core} itself.
 */
module io.datamem.impl {
    requires transitive io.datamem.api;
    requires jdk.jfr;
    requires static micrometer.core;

    exports io.datamem.impl;
    exports io.datamem.impl.micrometer;

    provides io.datamem.spi.DataMemProvider with AlignedProvider, StatsProvider,
            TrackingProvider,
            LimitProvider,
            GuardProvider,
            LogProvider,
            FaultsProvider,
            JfrProvider;
}
