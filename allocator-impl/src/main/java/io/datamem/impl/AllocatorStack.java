package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.internal.Messages;
import io.datamem.internal.HandlerRegistry;
import io.datamem.internal.LiveHandlers;
import io.datamem.internal.Registries;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Builds a handler from a leaf allocator and a stack of adaptors, and finds an adaptor in a stack.
 *
 * <pre>{@code
 * DataMemHandler h = AllocatorStack.on("aligned64")
 *         .with("stats")                                        // innermost
 *         .with("limit=1g")
 *         .with("tracking=full+guard")                           // adaptor terms, as in handler names
 *         .handler("aligned64+stats+limit=1g+tracking=full+guard");
 * StatisticsAdaptor stats = AllocatorStack.find(h, StatisticsAdaptor.class).orElseThrow();
 * }</pre>
 *
 * <p>Adaptors are applied in the order given, each wrapping the stack built so far, exactly as the
 * terms of a handler name {@code LEAF+A+B} (B wraps A wraps LEAF). The name is the caller's: it
 * need not be a resolvable handler name, but using one keeps {@code DataMem.handler(name)} and the
 * stack in agreement.
 */
public final class AllocatorStack {

    private AllocatorStack() {
    }

    /**
     * Starts a stack on a leaf allocator.
     *
     * @param leaf the allocator at the bottom
     * @return a builder
     * @throws NullPointerException if {@code leaf} is null
     */
    public static Builder on(DataMemAllocator leaf) {
        return new Builder(Objects.requireNonNull(leaf, "leaf"));
    }

    /**
     * Starts a stack on a fresh allocator resolved by handler name ({@link DataMem#createHandler}).
     *
     * @param handlerName a handler name, for example {@code aligned64}
     * @return a builder
     * @throws NullPointerException     if {@code handlerName} is null
     * @throws IllegalArgumentException if the name is malformed or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    public static Builder on(String handlerName) {
        DataMemHandler leaf = DataMem.createHandler(handlerName);
        LiveHandlers.forget(leaf);   // only its allocator is used: the stack's handler is the one to list
        return new Builder(leaf.allocator());
    }

    /**
     * The layers of a stack, walking {@link AllocatorAdaptor#upstream()}.
     *
     * @param top the outermost allocator
     * @return the allocators, outermost first, the leaf last
     * @throws NullPointerException if {@code top} is null
     */
    public static List<DataMemAllocator> layers(DataMemAllocator top) {
        List<DataMemAllocator> all = new ArrayList<>();
        for (DataMemAllocator a = Objects.requireNonNull(top, "top"); a != null;
             a = a instanceof AllocatorAdaptor ad ? ad.upstream() : null) {
            all.add(a);
        }
        return all;
    }

    /**
     * The outermost layer of a type in a stack.
     *
     * @param <T>  the type
     * @param top  the outermost allocator
     * @param type the type looked for, for example {@code StatisticsAdaptor.class}
     * @return the layer, or empty
     * @throws NullPointerException if an argument is null
     */
    public static <T extends DataMemAllocator> Optional<T> find(DataMemAllocator top, Class<T> type) {
        Objects.requireNonNull(type, "type");
        return layers(top).stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    /**
     * The outermost layer of a type in a handler's stack.
     *
     * @param <T>     the type
     * @param handler the handler
     * @param type    the type looked for
     * @return the layer, or empty
     * @throws NullPointerException if an argument is null
     */
    public static <T extends DataMemAllocator> Optional<T> find(DataMemHandler handler, Class<T> type) {
        return find(handler.allocator(), type);
    }

    /** A stack being built. Not thread-safe; build once. */
    public static final class Builder {

        private final DataMemAllocator leaf;
        private final List<Object> steps = new ArrayList<>(); // Function or String (adaptor terms)

        private Builder(DataMemAllocator leaf) {
            this.leaf = leaf;
        }

        /**
         * Adds an adaptor on top of the stack built so far.
         *
         * @param adaptor makes the adaptor from its upstream, for example {@code MyAdaptor::new}
         * @return this builder
         * @throws NullPointerException if {@code adaptor} is null
         */
        public Builder with(Function<? super DataMemAllocator, ? extends DataMemAllocator> adaptor) {
            steps.add(Objects.requireNonNull(adaptor, "adaptor"));
            return this;
        }

        /**
         * Adds adaptors named as in a handler name, resolved through the adaptor providers.
         *
         * @param adaptorTerms one or more terms joined with {@code +}, for example
         *                     {@code stats+limit=64m}
         * @return this builder
         * @throws NullPointerException     if {@code adaptorTerms} is null
         * @throws IllegalArgumentException if a term is malformed
         */
        public Builder with(String adaptorTerms) {
            ProviderTerm.split(Objects.requireNonNull(adaptorTerms, "adaptorTerms"));
            steps.add(adaptorTerms);
            return this;
        }

        /**
         * Builds the stack; adaptor terms get {@code "custom"} as their handler name.
         *
         * @return the outermost allocator
         * @throws IllegalArgumentException if an adaptor term is unknown or malformed (every term is
         *                                  checked before anything is built)
         * @throws IllegalStateException    if an adaptor's provider is unavailable, an adaptor cannot
         *                                  be made here (a log file that cannot be opened), or a
         *                                  function returned null
         */
        public DataMemAllocator build() {
            return build("custom");
        }

        /**
         * Builds the stack and names it.
         *
         * @param name the handler's name
         * @return a version-1 handler
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if the name is not a valid handler name, or an adaptor
         *                                  term is unknown or malformed (every term is checked
         *                                  before anything is built)
         * @throws IllegalStateException    if an adaptor's provider is unavailable, an adaptor cannot
         *                                  be made here (a log file that cannot be opened), or a
         *                                  function returned null
         */
        public DataMemHandler handler(String name) {
            Objects.requireNonNull(name, "name");
            DataMemHandler.of(name, leaf); // validates the name before anything is built
            return LiveHandlers.record(DataMemHandler.of(name, build(name)));
        }

        @SuppressWarnings("unchecked")
        private DataMemAllocator build(String name) {
            for (Object step : steps) {
                if (step instanceof String terms) {
                    registry().validateAdaptors(name, terms); // every term, before any side effect
                }
            }
            DataMemAllocator a = leaf;
            for (Object step : steps) {
                if (step instanceof String terms) {
                    a = registry().wrap(name, terms, a);
                } else {
                    a = ((Function<? super DataMemAllocator, ? extends DataMemAllocator>) step).apply(a);
                    if (a == null) {
                        throw new IllegalStateException("an adaptor function of " + Messages.quote(name) + " returned null");
                    }
                }
            }
            return a;
        }
    }

    /** The registry that resolves names, as the core reaches it (it answers after {@code DataMem} initialised). */
    private static HandlerRegistry<DataMemHandler, ?> registry() {
        DataMem.builtinDefault();
        return Registries.registry();
    }
}
