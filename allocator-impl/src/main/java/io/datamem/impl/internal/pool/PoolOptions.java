package io.datamem.impl.internal.pool;

import io.datamem.internal.Messages;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How a pool is sized.
 *
 * @param maxPooledByteSize   the largest request served from the pool; larger ones go to the
 *                            upstream
 * @param slabByteSize        the bytes of a slab (rounded to whole blocks, at most 64 and at
 *                            least one block per slab); slabs are carved from runs of at
 *                            least this size, the upstream's alignment and its page size
 * @param maxRetainedByteSize the free bytes the depot may keep before returning whole free slabs
 *                            to the upstream
 */
public record PoolOptions(long maxPooledByteSize, long slabByteSize, long maxRetainedByteSize) {

    /** The defaults: pool up to 16 MiB, 64 KiB slabs, keep up to 1 GiB free. */
    public static final PoolOptions DEFAULTS = new PoolOptions(16L << 20, 64L << 10, 1L << 30);

    /**
     * Validates the options.
     *
     * @throws IllegalArgumentException if a size is not positive, {@code maxPooledByteSize} or
     *                                  {@code slabByteSize} exceeds 2^40, or
     *                                  {@code maxRetainedByteSize} is negative
     */
    public PoolOptions {
        if (maxPooledByteSize < 1 || maxPooledByteSize > (1L << 40)) {
            throw new IllegalArgumentException("maxPooledByteSize: " + maxPooledByteSize
                    + " (expected: 1 to 2^40)");
        }
        if (slabByteSize < 1 || slabByteSize > (1L << 40)) {
            throw new IllegalArgumentException("slabByteSize: " + slabByteSize + " (expected: 1 to 2^40)");
        }
        if (maxRetainedByteSize < 0) {
            throw new IllegalArgumentException("maxRetainedByteSize: " + maxRetainedByteSize
                    + " (expected: >= 0)");
        }
    }

    /**
     * These options with another pooling limit.
     *
     * @param bytes the largest pooled request
     * @return a copy
     * @throws IllegalArgumentException if {@code bytes} is out of range
     */
    public PoolOptions withMaxPooledByteSize(long bytes) {
        return new PoolOptions(bytes, slabByteSize, maxRetainedByteSize);
    }

    /**
     * These options with another slab size.
     *
     * @param bytes the slab size
     * @return a copy
     * @throws IllegalArgumentException if {@code bytes} is out of range
     */
    public PoolOptions withSlabByteSize(long bytes) {
        return new PoolOptions(maxPooledByteSize, bytes, maxRetainedByteSize);
    }

    /**
     * These options with another retention cap.
     *
     * @param bytes the free bytes the depot may keep
     * @return a copy
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public PoolOptions withMaxRetainedByteSize(long bytes) {
        return new PoolOptions(maxPooledByteSize, slabByteSize, bytes);
    }

    /**
     * Reads the options of a {@code pool(UPSTREAM)} term of a handler name
     * ({@code pool(aligned64):max=1m,slab=128k}): {@code max}, {@code slab} and {@code retain},
     * each a byte size ({@code 64k}, {@code 1g}); the rest keep their defaults. The upstream
     * name inside the parentheses is not read: the caller resolves it. {@link #spec()} writes
     * the options back.
     *
     * @param term        the term, family {@code pool}
     * @param handlerName the handler's name, for messages
     * @return the options
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the term is not {@code pool(UPSTREAM)} with a non-empty
     *                                  upstream, an option is unknown or empty, or a size is
     *                                  malformed or out of range; the message quotes the handler
     *                                  name
     */
    public static PoolOptions parse(ProviderTerm term, String handlerName) {
        Objects.requireNonNull(term, "term");
        Objects.requireNonNull(handlerName, "handlerName");
        String nested = term.nested();
        if (nested == null || nested.isEmpty() || !term.text().startsWith("pool(")) {
            throw new IllegalArgumentException("handler name " + Messages.quote(handlerName) + ": "
                    + Messages.quote(term.text()) + " (expected: pool(UPSTREAM), for example pool(aligned64))");
        }
        PoolOptions options = DEFAULTS;
        List<ProviderTerm.Option> items;
        try {
            items = term.options("pool");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("handler name " + Messages.quote(handlerName) + ": "
                    + e.getMessage(), e);
        }
        for (ProviderTerm.Option o : items) {
            String value = o.value();
            options = switch (o.key()) {
                case "max" -> options.withMaxPooledByteSize(ProviderTerm.byteSize("max", value, 1L << 40));
                case "slab" -> options.withSlabByteSize(ProviderTerm.byteSize("slab", value, 1L << 40));
                case "retain" -> options.withMaxRetainedByteSize(ProviderTerm.byteSize("retain", value, 1L << 40));
                default -> throw new IllegalArgumentException("handler name " + Messages.quote(handlerName)
                        + ": pool option " + Messages.quote(o.toString())
                        + " (expected: max=SIZE, slab=SIZE or retain=SIZE)");
            };
        }
        return options;
    }

    /**
     * The options as a handler name writes them after {@code pool(UPSTREAM)}, which
     * {@link #parse} reads back: empty for the defaults, else {@code :} and the options that
     * differ from them, in bytes ({@code :max=1048576}).
     *
     * @return the text to append to {@code pool(UPSTREAM)}
     */
    public String spec() {
        List<String> parts = new ArrayList<>();
        if (maxPooledByteSize != DEFAULTS.maxPooledByteSize) {
            parts.add("max=" + maxPooledByteSize);
        }
        if (slabByteSize != DEFAULTS.slabByteSize) {
            parts.add("slab=" + slabByteSize);
        }
        if (maxRetainedByteSize != DEFAULTS.maxRetainedByteSize) {
            parts.add("retain=" + maxRetainedByteSize);
        }
        return parts.isEmpty() ? "" : ":" + String.join(",", parts);
    }
}
