package io.datamem.internal;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The handlers datamem has built and that are still reachable: those the provider registry made
 * ({@code DataMem.handler}, {@code DataMem.createHandler}), those {@code AllocatorStack} named, and
 * those set as the process default. Held through weak references: recording a handler does not
 * keep it, or the memory of its adaptors, alive; a handler nothing else reaches drops out. The
 * type parameter of the methods keeps this package free of datamem's types ({@code H} is
 * {@code DataMemHandler}).
 *
 * <p>The first handler recorded tells every {@link HandlerWatcher} found by
 * {@link ServiceLoader}, once. Thread-safe.
 */
public final class LiveHandlers {

    private static final ReferenceQueue<Object> CLEARED = new ReferenceQueue<>();
    // weak references in the order recorded; a WeakReference's equality is its identity
    private static final Set<Reference<Object>> RECORDED = new LinkedHashSet<>();
    private static final AtomicBoolean WATCHERS_TOLD = new AtomicBoolean();

    private LiveHandlers() {
    }

    /**
     * Records a handler, weakly. Recording the same handler again records it once.
     *
     * @param handler the handler
     * @param <H>     the handler type
     * @return {@code handler}
     * @throws NullPointerException if {@code handler} is null
     */
    public static <H> H record(H handler) {
        Objects.requireNonNull(handler, "handler");
        synchronized (RECORDED) {
            expunge();
            boolean known = false;
            for (Reference<Object> r : RECORDED) {
                if (r.refersTo(handler)) {
                    known = true;
                    break;
                }
            }
            if (!known) {
                RECORDED.add(new WeakReference<Object>(handler, CLEARED));
            }
        }
        if (!WATCHERS_TOLD.get() && WATCHERS_TOLD.compareAndSet(false, true)) {
            tellWatchers();
        }
        return handler;
    }

    /**
     * Forgets a handler recorded, for a handler built only to take its allocator (the leaf of a
     * stack built on a name), which would otherwise be listed beside the stack that uses it until
     * it is collected.
     *
     * @param handler the handler; one not recorded is ignored
     * @throws NullPointerException if {@code handler} is null
     */
    public static void forget(Object handler) {
        Objects.requireNonNull(handler, "handler");
        synchronized (RECORDED) {
            expunge();
            RECORDED.removeIf(r -> r.refersTo(handler));
        }
    }

    /**
     * The handlers recorded that are still reachable, in the order they were recorded.
     *
     * @param type the handler type, {@code DataMemHandler.class}
     * @param <H>  the handler type
     * @return a new list
     * @throws NullPointerException if {@code type} is null
     */
    public static <H> List<H> live(Class<H> type) {
        Objects.requireNonNull(type, "type");
        List<H> all = new ArrayList<>();
        synchronized (RECORDED) {
            expunge();
            for (Reference<Object> r : RECORDED) {
                Object h = r.get();
                if (type.isInstance(h)) {
                    all.add(type.cast(h));
                }
            }
        }
        return all;
    }

    private static void expunge() {
        for (Reference<?> r; (r = CLEARED.poll()) != null; ) {
            RECORDED.remove(r);
        }
    }

    private static void tellWatchers() {
        try {
            for (HandlerWatcher w : ServiceLoader.load(HandlerWatcher.class, HandlerWatcher.class.getClassLoader())) {
                try {
                    w.firstHandler();
                } catch (RuntimeException | LinkageError e) {
                    warn(w.getClass().getName() + " failed: " + e, e);
                }
            }
        } catch (ServiceConfigurationError e) {
            warn("a " + HandlerWatcher.class.getName() + " cannot be loaded: " + e.getMessage(), e);
        }
    }

    private static void warn(String message, Throwable e) {
        System.getLogger(LiveHandlers.class.getName()).log(System.Logger.Level.WARNING, "datamem: " + message, e);
    }
}
