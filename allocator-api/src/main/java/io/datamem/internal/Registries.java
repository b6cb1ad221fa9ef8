package io.datamem.internal;

import java.util.Iterator;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Where the core package finds the provider registry, and where the registry finds the built-in
 * handler: {@code io.datamem.DataMem} hands its built-in handler over when it initialises
 * ({@link #start}), and the registry, loaded on first use through {@link ServiceLoader}, takes it
 * from here ({@link #builtin}) instead of calling back into {@code DataMem}.
 */
public final class Registries {

    private static volatile Object builtin;

    private Registries() {
    }

    /**
     * Records the built-in handler; called once, by {@code io.datamem.DataMem}'s initialisation.
     *
     * @param builtinHandler the {@code default_allocator} handler
     * @throws NullPointerException  if {@code builtinHandler} is null
     * @throws IllegalStateException if called twice
     */
    public static synchronized void start(Object builtinHandler) {
        if (builtinHandler == null) {
            throw new NullPointerException("builtinHandler");
        }
        if (builtin != null) {
            throw new IllegalStateException("the built-in handler is recorded already");
        }
        builtin = builtinHandler;
    }

    /**
     * The built-in handler {@link #start} recorded.
     *
     * @return the {@code default_allocator} handler
     * @throws IllegalStateException if {@code io.datamem.DataMem} has not initialised
     */
    public static Object builtin() {
        Object b = builtin;
        if (b == null) {
            throw new IllegalStateException("io.datamem.DataMem has not initialised: the built-in handler is unknown");
        }
        return b;
    }

    /**
     * The registry, loaded on first use.
     *
     * @param <H> the handler type
     * @param <P> the provider type
     * @return the registry
     * @throws IllegalStateException if no registry can be found (a repackaged jar that dropped
     *                               allocator-api's {@code META-INF/services} entry)
     */
    @SuppressWarnings("unchecked")
    public static <H, P> HandlerRegistry<H, P> registry() {
        return (HandlerRegistry<H, P>) Holder.REGISTRY;
    }

    private static final class Holder {
        static final HandlerRegistry<?, ?> REGISTRY = load();
    }

    private static HandlerRegistry<?, ?> load() {
        try {
            @SuppressWarnings("rawtypes")
            Iterator<HandlerRegistry> it =
                    ServiceLoader.load(HandlerRegistry.class, Registries.class.getClassLoader()).iterator();
            if (it.hasNext()) {
                return it.next();
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("datamem's provider registry cannot be loaded: " + e.getMessage(), e);
        }
        throw new IllegalStateException("datamem's provider registry is missing: allocator-api declares it in its"
                + " module-info and in META-INF/services/" + HandlerRegistry.class.getName() + "; a repackaged jar"
                + " must keep both");
    }
}
