package io.datamem.internal;

/**
 * Told once, the first time a handler is recorded in {@link LiveHandlers}: the hook through which
 * a module above allocator-api starts what must follow the first handler (allocator-impl registers
 * its memory-snapshot MBean). Found by {@link java.util.ServiceLoader}: allocator-api {@code uses}
 * it, a module {@code provides} it (and lists it in {@code META-INF/services} for the class path).
 *
 * <p>An implementation must be quick, must not build handlers, and should not throw: an exception
 * it throws is logged and otherwise ignored, as the handler being built does not depend on it.
 */
public interface HandlerWatcher {

    /**
     * Called once per class loader of {@link LiveHandlers}, on the thread that records the first
     * handler, after it is recorded and outside any lock of the registry's.
     */
    void firstHandler();
}
