package io.datamem.spi;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.internal.Registries;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A source of allocators, discovered with {@link java.util.ServiceLoader} on the module path
 * ({@code provides io.datamem.spi.DataMemProvider with ...}) and on the class path
 * ({@code META-INF/services/io.datamem.spi.DataMemProvider}).
 *
 * <p>A provider names the handler-name terms it understands and says whether it works here. A
 * <em>leaf</em> provider builds an allocator from a term ({@code aligned64}, {@code numa:bind=0},
 * {@code pool(aligned64)}); an <em>adaptor</em> provider wraps an upstream allocator
 * ({@code stats}, {@code limit=1048576}). Handler names are resolved by
 * {@link io.datamem.DataMem#handler(String)}.
 *
 * <p>Implementations are stateless and thread-safe; {@link #availability()} may probe the machine
 * once and cache the answer.
 */
public interface DataMemProvider {

    /** Where a provider's terms may appear in a handler name. */
    enum Role {
        /** The first term: builds an allocator. */
        LEAF,
        /** A term after {@code +}: wraps the allocator built so far. */
        ADAPTOR
    }

    /**
     * The provider's family name, as it appears in listings.
     *
     * @return for example {@code aligned}
     */
    String name();

    /**
     * Whether the provider's terms are leaves or adaptors.
     *
     * @return the role
     */
    Role role();

    /**
     * The forms of the terms the provider accepts, for listings and error messages.
     *
     * @return for example {@code ["aligned64", "aligned:N (N a power of two >= 8)"]}
     */
    List<String> names();

    /**
     * Whether this provider understands a term. Say yes to every term of the provider's family
     * (even malformed ones, which {@link #createAllocator}/{@link #createAdaptor} then reject with a
     * precise message), and no to anything else.
     *
     * @param term a term
     * @return whether the term is this provider's
     */
    boolean accepts(ProviderTerm term);

    /**
     * Whether the provider works on this machine.
     *
     * @return the availability, with the reason when unavailable
     */
    default Availability availability() {
        return Availability.AVAILABLE;
    }

    /**
     * The export hook of memory on a device this provider's backend manages, for arrays that were
     * not allocated through it: {@link io.datamem.dlpack.DLPack#fromDLPack} attaches it to the
     * traits of imported tensors, so that they export, synchronise and copy as the backend's own
     * memory does. Must not load native libraries for a device the backend does not manage.
     *
     * @param device a device imported memory lives on
     * @return the hook, or empty for devices this provider does not manage (the default)
     */
    default Optional<DeviceInterchange> interchangeFor(Device device) {
        return Optional.empty();
    }

    /**
     * The export hook for one imported block on a device: what DLPack import asks. By default the
     * answer of {@link #interchangeFor(Device)}; a backend that can tell its own memory from other
     * memory on the same device type (two backends both on {@code kDLExtDev}, or a pointer its
     * runtime does not know) overrides this and answers empty for a block it does not hold, so that
     * another provider may answer, or the tensor imports without a hook. Must not load native
     * libraries for a device the backend does not manage.
     *
     * @param device a device imported memory lives on
     * @param block  the imported tensor's lowest element (as a zero-length segment); NULL for a
     *               tensor without elements
     * @return the hook, or empty
     * @throws NullPointerException if an argument is null
     */
    default Optional<DeviceInterchange> interchangeFor(Device device, MemorySegment block) {
        Objects.requireNonNull(block, "block");
        return interchangeFor(device);
    }

    /**
     * The providers found on the module path and class path, the built-in
     * {@code default_allocator} first: what {@link io.datamem.DataMem#handler(String)} resolves
     * names with, for listings ({@code datamem info}) and for finding a backend's
     * {@link #interchangeFor} hook.
     *
     * @return the providers, in discovery order, unmodifiable
     * @throws java.util.ServiceConfigurationError if a provider cannot be instantiated
     */
    static List<DataMemProvider> installed() {
        DataMem.builtinDefault();   // initialises the core, which hands the registry its built-in handler
        return Registries.<DataMemHandler, DataMemProvider>registry().providers();
    }

    /**
     * Checks a term without building anything and without touching anything outside this JVM: its
     * syntax, its options and their values. {@link io.datamem.DataMem#handler(String)} calls it for
     * every term of a name, nested names included, before it creates any allocator, so that a name
     * refused for any term has had no side effect (a log file opened or truncated, memory taken).
     * The nested name of a term ({@link ProviderTerm#nested()}) is checked by the caller; do not
     * call {@link ProviderContext#resolveAllocator} here.
     *
     * <p>The default accepts every term, leaving the checks to {@link #createAllocator} and
     * {@link #createAdaptor}. A provider should check here everything those methods would reject
     * for the term's text, and must when building has side effects.
     *
     * @param term    an accepted term
     * @param context the context of the handler being checked
     * @throws IllegalArgumentException if the term's arguments are malformed
     */
    default void validate(ProviderTerm term, ProviderContext context) {
    }

    /**
     * Builds a leaf allocator.
     *
     * @param term    an accepted term
     * @param context the context of the handler being built
     * @return a new allocator
     * @throws IllegalArgumentException      if the term's arguments are malformed
     * @throws IllegalStateException         if the provider is unavailable here, or the allocator
     *                                       cannot be made here (the message says why and what to do)
     * @throws UnsupportedOperationException if the provider is not a {@link Role#LEAF} provider
     */
    default DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        throw new UnsupportedOperationException(name() + " is not a leaf provider: '" + term + "' must follow '+'");
    }

    /**
     * Wraps an upstream allocator.
     *
     * @param term     an accepted term
     * @param upstream the allocator built from the terms before this one
     * @param context  the context of the handler being built
     * @return a new adaptor over {@code upstream}
     * @throws IllegalArgumentException      if the term's arguments are malformed
     * @throws IllegalStateException         if the provider is unavailable here, or the adaptor
     *                                       cannot be made here (a file that cannot be opened, say)
     * @throws UnsupportedOperationException if the provider is not an {@link Role#ADAPTOR} provider
     */
    default DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        throw new UnsupportedOperationException(name() + " is not an adaptor: '" + term
                + "' must come first in a handler name");
    }
}
