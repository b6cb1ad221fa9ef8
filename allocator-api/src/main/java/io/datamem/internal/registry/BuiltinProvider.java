package io.datamem.internal.registry;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.internal.Registries;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/**
 * Provides {@code default_allocator}, the built-in default handler's allocator. As a leaf of a
 * composed name ({@code default_allocator+stats}) it is the same C-library allocator.
 */
public final class BuiltinProvider implements DataMemProvider {

    /** The name of the built-in default handler, as in NumPy. */
    public static final String DEFAULT_NAME = "default_allocator";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public BuiltinProvider() {
    }

    @Override
    public String name() {
        return DEFAULT_NAME;
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of(DEFAULT_NAME);
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.text().equals(DEFAULT_NAME);
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        return builtin().allocator();
    }

    /**
     * The built-in handler, as {@code io.datamem.DataMem} recorded it when it initialised.
     *
     * @return the {@code default_allocator} handler
     * @throws IllegalStateException if {@code DataMem} has not initialised
     */
    static DataMemHandler builtin() {
        return (DataMemHandler) Registries.builtin();
    }
}
