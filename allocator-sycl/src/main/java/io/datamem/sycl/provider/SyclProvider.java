package io.datamem.sycl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.DeviceInterchange;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.sycl.SyclDevice;
import io.datamem.sycl.SyclQueue;
import io.datamem.sycl.SyclSelector;
import io.datamem.sycl.SyclUsmAllocator;
import io.datamem.usm.UsmKind;

import java.util.List;
import java.util.Optional;

/**
 * Provides {@code sycl:host}, {@code sycl:shared} and {@code sycl:device}, each optionally followed
 * by {@code :} and a filter selector: {@code sycl:device:opencl:gpu:0}, {@code sycl:shared:cpu}.
 * Without a selector the default device is used.
 */
public final class SyclProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public SyclProvider() {
    }

    @Override
    public String name() {
        return "sycl";
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("sycl:host[:SELECTOR]", "sycl:shared[:SELECTOR]", "sycl:device[:SELECTOR]");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals("sycl");
    }

    /**
     * The SYCL hook for memory imported on a {@code kDLOneAPI} device: that of the device's shared
     * queue ({@link SyclQueue#interchange()}), so that an imported array exports, and copies through
     * {@link SyclQueue}, as datamem's own USM memory does (its USM kind is asked of the runtime).
     *
     * @param device the device of imported memory
     * @return the hook for a {@code kDLOneAPI} device with USM here, else empty (not
     *         {@code kDLOneAPI}, no OpenCL runtime, no device with that ordinal, or one without
     *         usable USM)
     * @throws io.datamem.BackendException if OpenCL cannot create the device's context or queue
     */
    @Override
    public Optional<DeviceInterchange> interchangeFor(Device device) {
        if (device.type() != DeviceType.ONE_API) {
            return Optional.empty();
        }
        List<SyclDevice> devices = SyclQueue.devices();   // empty without an OpenCL runtime
        if (device.id() >= devices.size() || !devices.get(device.id()).usm()) {
            return Optional.empty();
        }
        return Optional.of(SyclQueue.of(Integer.toString(device.id())).interchange());
    }

    @Override
    public Availability availability() {
        return SyclQueue.availability(SyclSelector.defaultSelector(), UsmKind.UNKNOWN);
    }

    /**
     * Parses a term into its kind and selector.
     *
     * @param term        a {@code sycl} term
     * @param handlerName the handler name, for messages
     * @return the kind and the selector
     * @throws IllegalArgumentException if the kind or the selector is malformed
     */
    public static Parsed parse(ProviderTerm term, String handlerName) {
        String text = term.text();
        if (!text.startsWith("sycl:") || term.nested() != null) {
            throw new IllegalArgumentException("handler name '" + handlerName + "': '" + text
                    + "' (expected: sycl:host, sycl:shared or sycl:device, optionally followed by ':' and a filter"
                    + " selector such as opencl:gpu:0)");
        }
        String argument = text.substring("sycl:".length());
        int colon = argument.indexOf(':');
        String kindName = colon < 0 ? argument : argument.substring(0, colon);
        UsmKind kind;
        try {
            kind = UsmKind.ofDpctlName(kindName);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name '" + handlerName + "': USM kind '" + kindName + "' in '"
                    + text + "' (expected: host, shared or device)");
        }
        SyclSelector selector;
        try {
            selector = colon < 0 ? SyclSelector.defaultSelector() : SyclSelector.parse(argument.substring(colon + 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name '" + handlerName + "': " + e.getMessage(), e);
        }
        return new Parsed(kind, selector);
    }

    /**
     * A parsed term.
     *
     * @param kind     the USM kind
     * @param selector the device selector
     */
    public record Parsed(UsmKind kind, SyclSelector selector) {
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        Parsed p = parse(term, context.handlerName());
        Availability a = SyclQueue.availability(p.selector(), p.kind());
        if (!a.available()) {
            throw new IllegalStateException("handler '" + context.handlerName() + "' is unavailable: " + a.reason());
        }
        return SyclUsmAllocator.builder(p.kind()).selector(p.selector()).name(context.handlerName()).build();
    }
}
