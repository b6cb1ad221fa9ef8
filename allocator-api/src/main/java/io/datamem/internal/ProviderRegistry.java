package io.datamem.internal;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Resolves handler names through the providers found by {@link ServiceLoader}.
 */
public final class ProviderRegistry {

    private static final int MAX_NESTING = 16;

    private static volatile List<DataMemProvider> providers;
    private static final Map<String, DataMemHandler> CACHE = new ConcurrentHashMap<>();

    private ProviderRegistry() {
    }

    /**
     * The providers on the module path and class path, the built-in one first.
     *
     * @return the providers, in discovery order
     * @throws ServiceConfigurationError if a provider cannot be instantiated
     */
    public static List<DataMemProvider> providers() {
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
     * @throws IllegalArgumentException if the name is malformed or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    public static DataMemHandler handler(String handlerName) {
        String key = canonical(handlerName);
        DataMemHandler h = CACHE.get(key);
        if (h != null) {
            return h;
        }
        synchronized (CACHE) {
            return CACHE.computeIfAbsent(key, ProviderRegistry::create);
        }
    }

    /**
     * A new handler with a name (except {@code default_allocator}, which is the built-in singleton).
     *
     * @param handlerName a handler name
     * @return the handler
     * @throws IllegalArgumentException if the name is malformed or unknown
     * @throws IllegalStateException    if a provider it needs is unavailable here
     */
    public static DataMemHandler create(String handlerName) {
        String key = canonical(handlerName);
        if (key.equals(BuiltinProvider.DEFAULT_NAME)) {
            return DataMem.builtinDefault();
        }
        DataMemAllocator allocator = build(key, key, 0);
        return new DataMemHandler(key, 1, allocator);
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
        return b.toString();
    }

    private static DataMemAllocator build(String rootName, String handlerName, int depth) {
        if (depth > MAX_NESTING) {
            throw new IllegalArgumentException("handler name: '" + rootName + "' nests more than " + MAX_NESTING
                    + " levels");
        }
        List<ProviderTerm> terms = ProviderTerm.split(handlerName);
        ProviderContext context = new ProviderContext() {
            @Override
            public String handlerName() {
                return rootName;
            }

            @Override
            public DataMemAllocator resolveAllocator(String nested) {
                return build(rootName, nested, depth + 1);
            }
        };
        DataMemAllocator allocator = null;
        for (int i = 0; i < terms.size(); i++) {
            ProviderTerm term = terms.get(i);
            DataMemProvider.Role role = i == 0 ? DataMemProvider.Role.LEAF : DataMemProvider.Role.ADAPTOR;
            DataMemProvider provider = find(rootName, term, role);
            Availability availability = provider.availability();
            if (!availability.available()) {
                throw new IllegalStateException("handler '" + rootName + "' is unavailable: provider '"
                        + provider.name() + "' for '" + term + "': " + availability.reason());
            }
            allocator = i == 0 ? provider.createAllocator(term, context)
                    : provider.createAdaptor(term, allocator, context);
            if (allocator == null) {
                throw new IllegalStateException("provider '" + provider.name() + "' returned null for '" + term + "'");
            }
        }
        return allocator;
    }

    private static DataMemProvider find(String rootName, ProviderTerm term, DataMemProvider.Role role) {
        DataMemProvider wrongRole = null;
        for (DataMemProvider p : providers()) {
            if (p.accepts(term)) {
                if (p.role() == role) {
                    return p;
                }
                wrongRole = p;
            }
        }
        if (wrongRole != null) {
            throw new IllegalArgumentException("handler name '" + rootName + "': '" + term + "' is "
                    + (role == DataMemProvider.Role.LEAF ? "an adaptor; put a leaf allocator first, as in aligned64+"
                    + term : "a leaf allocator; only adaptors may follow '+'"));
        }
        throw new IllegalArgumentException("unknown handler name '" + rootName + "': no provider accepts '" + term
                + "' as " + (role == DataMemProvider.Role.LEAF ? "a leaf" : "an adaptor") + ". Available: "
                + describe());
    }

    /**
     * A one-line list of every accepted name form with its availability, for error messages.
     *
     * @return for example {@code default_allocator, aligned64, aligned:N; adaptors: stats}
     */
    public static String describe() {
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
