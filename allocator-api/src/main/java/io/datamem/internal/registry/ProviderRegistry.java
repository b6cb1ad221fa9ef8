package io.datamem.internal.registry;

import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.internal.HandlerRegistry;
import io.datamem.internal.LiveHandlers;
import io.datamem.internal.Registries;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Resolves handler names through the providers found by {@link ServiceLoader}: the
 * {@link HandlerRegistry} service that {@link Registries} loads for {@code io.datamem.DataMem} and
 * {@code io.datamem.spi}, which cannot name this package (it imports theirs). One instance per class
 * loader is loaded; the providers and the cache of named handlers are the class's.
 */
public final class ProviderRegistry implements HandlerRegistry<DataMemHandler, DataMemProvider> {

    private static final int MAX_NESTING = 16;

    private static volatile List<DataMemProvider> providers;
    private static final Map<String, DataMemHandler> CACHE = new ConcurrentHashMap<>();

    /** The instance {@link ServiceLoader} makes. */
    public ProviderRegistry() {
    }

    /**
     * The providers on the module path and class path, the built-in one first.
     *
     * @return the providers, in discovery order
     * @throws ServiceConfigurationError if a provider cannot be instantiated
     */
    @Override
    public List<DataMemProvider> providers() {
        return loadedProviders();
    }

    private static List<DataMemProvider> loadedProviders() {
        List<DataMemProvider> p = providers;
        if (p == null) {
            synchronized (ProviderRegistry.class) {
                p = providers;
                if (p == null) {
                    p = load();
                    providers = p;
                }
            }
        }
        return p;
    }

    private static List<DataMemProvider> load() {
        List<DataMemProvider> found = new ArrayList<>();
        found.add(new BuiltinProvider());
        java.util.Set<String> seen = new java.util.HashSet<>();
        seen.add(BuiltinProvider.class.getName());
        for (ClassLoader loader : new ClassLoader[] {Thread.currentThread().getContextClassLoader(),
                ProviderRegistry.class.getClassLoader()}) {
            for (DataMemProvider provider : ServiceLoader.load(DataMemProvider.class, loader)) {
                if (seen.add(provider.getClass().getName())) {
                    found.add(provider);
                }
            }
        }
        return List.copyOf(found);
    }

    /**
     * The handler with a name, built once and cached for the life of the process.
     *
     * @param handlerName a handler name
     * @return the handler
     * @throws IllegalArgumentException if the name is malformed or unknown, or too long
     * @throws IllegalStateException    if a provider it needs is unavailable here, or the handler
     *                                  cannot be made here
     */
    @Override
    public DataMemHandler handler(String handlerName) {
        String key = canonical(handlerName);
        DataMemHandler h = CACHE.get(key);
        if (h != null) {
            return h;
        }
        synchronized (CACHE) {
            return CACHE.computeIfAbsent(key, this::create);
        }
    }

    /**
     * A new handler with a name (except {@code default_allocator}, which is the built-in singleton).
     * The whole name is checked first, every term and every nested name, each by its provider
     * ({@link DataMemProvider#validate}); only then is anything built, so a refused name has had
     * no side effect (no log file opened, nothing reserved).
     *
     * @param handlerName a handler name
     * @return the handler
     * @throws IllegalArgumentException if the name is malformed or unknown, or too long
     * @throws IllegalStateException    if a provider it needs is unavailable here, or the handler
     *                                  cannot be made here
     */
    @Override
    public DataMemHandler create(String handlerName) {
        String key = canonical(handlerName);
        if (key.equals(BuiltinProvider.DEFAULT_NAME)) {
            return BuiltinProvider.builtin();
        }
        validate(key, key, DataMemProvider.Role.LEAF, 0);
        DataMemAllocator allocator = build(key, key, 0);
        return LiveHandlers.record(new DataMemHandler(key, 1, allocator));
    }

    /**
     * Wraps an allocator in adaptors named by terms, as the terms after the leaf of a handler name
     * would: every term is checked before any adaptor is made.
     *
     * @param handlerName the name of the handler being built, for messages and for the adaptors
     * @param adaptors    adaptor terms joined with {@code +}, for example {@code stats+limit=1g}
     * @param upstream    the allocator to wrap (a {@code DataMemAllocator})
     * @param <A>         the allocator type
     * @return the outermost adaptor
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a term is malformed, unknown or not an adaptor
     * @throws IllegalStateException    if a provider it needs is unavailable here, or an adaptor
     *                                  cannot be made here
     * @throws ClassCastException       if {@code upstream} is not a {@code DataMemAllocator}
     */
    @Override
    @SuppressWarnings("unchecked")
    public <A> A wrap(String handlerName, String adaptors, A upstream) {
        return (A) wrapAllocator(handlerName, adaptors, (DataMemAllocator) upstream);
    }

    private static DataMemAllocator wrapAllocator(String handlerName, String adaptors, DataMemAllocator upstream) {
        Objects.requireNonNull(handlerName, "handlerName");
        Objects.requireNonNull(upstream, "upstream");
        validate(handlerName, adaptors, DataMemProvider.Role.ADAPTOR, 0);
        DataMemAllocator a = upstream;
        ProviderContext context = context(handlerName, 0);
        for (ProviderTerm term : ProviderTerm.split(adaptors)) {
            a = create(find(handlerName, term, DataMemProvider.Role.ADAPTOR), term, a, context);
        }
        return a;
    }

    /**
     * Checks adaptor terms as {@link #wrap} would, without building anything.
     *
     * @param handlerName the name of the handler being built, for messages
     * @param adaptors    adaptor terms joined with {@code +}
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a term is malformed, unknown or not an adaptor
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    @Override
    public void validateAdaptors(String handlerName, String adaptors) {
        Objects.requireNonNull(handlerName, "handlerName");
        validate(handlerName, Objects.requireNonNull(adaptors, "adaptors"), DataMemProvider.Role.ADAPTOR, 0);
    }

    private static String canonical(String handlerName) {
        if (handlerName == null) {
            throw new NullPointerException("handlerName");
        }
        StringBuilder b = new StringBuilder();
        for (ProviderTerm t : ProviderTerm.split(handlerName)) {
            if (!b.isEmpty()) {
                b.append('+');
            }
            b.append(t.text());
        }
        String name = b.toString();
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > DataMemHandler.MAX_NAME_BYTES) {
            throw new IllegalArgumentException("handler name " + Messages.quote(name) + " is " + bytes
                    + " UTF-8 bytes (expected: at most " + DataMemHandler.MAX_NAME_BYTES + ", NEP 49's char name[127])");
        }
        return name;
    }

    /**
     * Checks a handler name, or a run of adaptor terms, without building anything: each term has a
     * provider of the right role that is available here and accepts its options, and each nested
     * name does too.
     */
    private static void validate(String rootName, String handlerName, DataMemProvider.Role first, int depth) {
        if (depth > MAX_NESTING) {
            throw new IllegalArgumentException("handler name " + Messages.quote(rootName) + " nests more than "
                    + MAX_NESTING + " levels");
        }
        ProviderContext context = new ProviderContext() {
            @Override
            public String handlerName() {
                return rootName;
            }

            @Override
            public DataMemAllocator resolveAllocator(String nested) {
                throw new IllegalStateException("a provider resolved " + Messages.quote(nested)
                        + " while validating: validate must not build allocators");
            }
        };
        List<ProviderTerm> terms = ProviderTerm.split(handlerName);
        for (int i = 0; i < terms.size(); i++) {
            ProviderTerm term = terms.get(i);
            DataMemProvider provider = find(rootName, term, i == 0 ? first : DataMemProvider.Role.ADAPTOR);
            provider.validate(term, context);
            String nested = term.nested();
            if (nested != null && !nested.isEmpty()) {
                validate(rootName, nested, DataMemProvider.Role.LEAF, depth + 1);
            }
        }
    }

    private static ProviderContext context(String rootName, int depth) {
        return new ProviderContext() {
            @Override
            public String handlerName() {
                return rootName;
            }

            @Override
            public DataMemAllocator resolveAllocator(String nested) {
                return build(rootName, nested, depth + 1);
            }
        };
    }

    private static DataMemAllocator build(String rootName, String handlerName, int depth) {
        if (depth > MAX_NESTING) {
            throw new IllegalArgumentException("handler name " + Messages.quote(rootName) + " nests more than "
                    + MAX_NESTING + " levels");
        }
        List<ProviderTerm> terms = ProviderTerm.split(handlerName);
        ProviderContext context = context(rootName, depth);
        DataMemAllocator allocator = null;
        for (int i = 0; i < terms.size(); i++) {
            ProviderTerm term = terms.get(i);
            DataMemProvider.Role role = i == 0 ? DataMemProvider.Role.LEAF : DataMemProvider.Role.ADAPTOR;
            allocator = create(find(rootName, term, role), term, allocator, context);
        }
        return allocator;
    }

    private static DataMemAllocator create(DataMemProvider provider, ProviderTerm term, DataMemAllocator upstream,
                                           ProviderContext context) {
        DataMemAllocator allocator = provider.role() == DataMemProvider.Role.LEAF
                ? provider.createAllocator(term, context) : provider.createAdaptor(term, upstream, context);
        if (allocator == null) {
            throw new IllegalStateException("provider '" + provider.name() + "' returned null for "
                    + Messages.quote(term.text()));
        }
        return allocator;
    }

    /** The provider of a term, available here and of the role its place needs. */
    private static DataMemProvider find(String rootName, ProviderTerm term, DataMemProvider.Role role) {
        DataMemProvider wrongRole = null;
        for (DataMemProvider p : loadedProviders()) {
            if (p.accepts(term)) {
                if (p.role() == role) {
                    Availability availability = p.availability();
                    if (!availability.available()) {
                        throw new IllegalStateException("handler " + Messages.quote(rootName) + " is unavailable: "
                                + "provider '" + p.name() + "' for " + Messages.quote(term.text()) + ": "
                                + availability.reason());
                    }
                    return p;
                }
                wrongRole = p;
            }
        }
        String quotedTerm = Messages.quote(term.text());
        if (wrongRole != null) {
            throw new IllegalArgumentException("handler name " + Messages.quote(rootName) + ": " + quotedTerm + " is "
                    + (role == DataMemProvider.Role.LEAF ? "an adaptor; put a leaf allocator first, as in aligned64+"
                    + term : "a leaf allocator; only adaptors may follow '+'"));
        }
        Optional<HandlerFamilies.Family> missing = HandlerFamilies.missing(term, loadedProviders());
        if (missing.isPresent()) {
            HandlerFamilies.Family f = missing.get();
            throw new IllegalArgumentException("handler " + Messages.quote(rootName) + ": the family '" + f.name()
                    + "' is provided by " + f.artifact() + ", which is not on the class path or module path; add "
                    + "that artifact (" + HandlerFamilies.DOC + ")");
        }
        List<String> close = HandlerFamilies.suggestions(term, loadedProviders());
        throw new IllegalArgumentException("unknown handler name " + Messages.quote(rootName) + ": no provider accepts "
                + quotedTerm + " as " + (role == DataMemProvider.Role.LEAF ? "a leaf" : "an adaptor")
                + (close.isEmpty() ? "." : "; did you mean " + String.join(" or ", close) + "?")
                + " Available: " + HandlerFamilies.line(loadedProviders())
                + " (DataMem.describeProviders() lists every spelling)");
    }

    /**
     * A one-line list of every accepted name form with its availability, for error messages.
     *
     * @return for example {@code default_allocator, aligned64, aligned:N; adaptors: stats}
     */
    @Override
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (DataMemProvider.Role role : DataMemProvider.Role.values()) {
            String list = providers().stream().filter(p -> p.role() == role)
                    .map(p -> {
                        Availability a = p.availability();
                        String names = String.join(", ", p.names());
                        return a.available() ? names : names + " [unavailable: " + a.reason() + "]";
                    })
                    .collect(Collectors.joining(", "));
            if (!list.isEmpty()) {
                b.append(b.isEmpty() ? "" : "; adaptors (after '+'): ").append(list);
            }
        }
        return b.toString();
    }
}
