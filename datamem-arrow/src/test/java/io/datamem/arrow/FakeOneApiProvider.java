package io.datamem.arrow;

import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.DeviceType;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderTerm;

import java.util.List;
import java.util.Optional;

/**
 * A test provider standing for the SYCL backend at import time: it names no handler and serves
 * the {@link DeviceInterchange} of oneAPI devices, the fake a test installs.
 */
public final class FakeOneApiProvider implements DataMemProvider {

    /** The interchange served for oneAPI devices, or null for none. */
    static volatile DeviceInterchange oneApi;

    /** The provider, as ServiceLoader makes it. */
    public FakeOneApiProvider() {
    }

    @Override
    public String name() {
        return "arrow-test-oneapi";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of();
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return false;
    }

    @Override
    public Optional<DeviceInterchange> interchangeFor(Device device) {
        DeviceInterchange hook = oneApi;
        return device.type() == DeviceType.ONE_API ? Optional.ofNullable(hook) : Optional.empty();
    }
}
