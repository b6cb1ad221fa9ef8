package org.example.scratchdev.provider;

import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import org.example.scratchdev.ScratchDevice;
import org.example.scratchdev.internal.NativeHeap;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Provides {@code scratchdev} (device 0) and {@code scratchdev:N} (device N), and the scratch
 * devices' export hook to DLPack imports on {@code (kDLExtDev, N)}.
 */
public final class ScratchProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public ScratchProvider() {
    }

    @Override
    public String name() {
        return ScratchDevice.FAMILY;
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of(ScratchDevice.FAMILY, ScratchDevice.FAMILY + ":N (N a device ordinal, 0 to "
                + (ScratchDevice.COUNT - 1) + ")");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(ScratchDevice.FAMILY);
    }

    @Override
    public Availability availability() {
        return NativeHeap.availability();
    }

    /**
     * Checks the term's ordinal, touching nothing.
     *
     * @param term    a {@code scratchdev} term
     * @param context the context of the handler being checked
     * @throws IllegalArgumentException if the term is not {@code scratchdev} or {@code scratchdev:N}
     *                                  with N a device ordinal
     */
    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        ordinal(term, context.handlerName());
    }

    /**
     * An allocator of the device the term names.
     *
     * @param term    a {@code scratchdev} term
     * @param context the context of the handler being built
     * @return a new allocator on the device
     * @throws IllegalArgumentException if the term is not {@code scratchdev} or {@code scratchdev:N}
     *                                  with N a device ordinal
     */
    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        return ScratchDevice.of(ordinal(term, context.handlerName())).allocator(context.handlerName());
    }

    /**
     * The hook of a scratch device, for memory imported on it.
     *
     * @param device a device imported memory lives on
     * @return the device's {@code ScratchInterchange} for {@code (kDLExtDev, N)} with N below
     *         {@link ScratchDevice#COUNT}, else empty
     * @throws NullPointerException if {@code device} is null
     */
    @Override
    public Optional<DeviceInterchange> interchangeFor(Device device) {
        return ScratchDevice.manages(device) ? Optional.of(ScratchDevice.of(device.id()).interchange())
                : Optional.empty();
    }

    /**
     * The hook for an imported block: only for memory this device holds, so that a tensor another
     * runtime made on {@code kDLExtDev} is not taken for the scratch device's.
     *
     * @param device the imported tensor's device
     * @param block  its lowest element
     * @return the device's hook if it holds the block, else empty
     */
    @Override
    public Optional<DeviceInterchange> interchangeFor(Device device, MemorySegment block) {
        return ScratchDevice.manages(device) && ScratchDevice.of(device.id()).holds(block.address())
                ? interchangeFor(device) : Optional.empty();
    }

    /**
     * The device ordinal of a term.
     *
     * @param term        a {@code scratchdev} term
     * @param handlerName the handler name, for messages
     * @return 0 for {@code scratchdev}, N for {@code scratchdev:N}
     * @throws NullPointerException     if {@code term} is null
     * @throws IllegalArgumentException if the term is malformed or N is not a device ordinal
     */
    public static int ordinal(ProviderTerm term, String handlerName) {
        Objects.requireNonNull(term, "term");
        String text = term.text();
        String prefix = ScratchDevice.FAMILY + ":";
        if (text.equals(ScratchDevice.FAMILY)) {
            return 0;
        }
        String digits = text.startsWith(prefix) ? text.substring(prefix.length()) : "";
        if (digits.isEmpty() || digits.length() > 3 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("handler name '" + handlerName + "': '" + text + "' (expected: "
                    + ScratchDevice.FAMILY + " or " + ScratchDevice.FAMILY + ":N, N a device ordinal 0 to "
                    + (ScratchDevice.COUNT - 1) + ")");
        }
        int n = Integer.parseInt(digits);
        if (n >= ScratchDevice.COUNT) {
            throw new IllegalArgumentException("handler name '" + handlerName + "': '" + text + "': there is no"
                    + " scratch device " + n + " (expected: an ordinal 0 to " + (ScratchDevice.COUNT - 1) + ")");
        }
        return n;
    }
}
