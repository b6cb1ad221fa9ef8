package io.datamem.internal.registry;

import io.datamem.spi.DataMemProvider;
import io.datamem.spi.DataMemProvider.Role;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The handler-name families datamem's own artifacts provide, known to the API even when the
 * artifact is absent, so that a name can be answered with the artifact to add, and a misspelt name
 * with the closest spellings. Internal.
 */
public final class HandlerFamilies {

    /** The Maven coordinates of the CPU backends and adaptors. */
    public static final String IMPL = "io.datamem:allocator-impl";
    /** The Maven coordinates of the CUDA backend. */
    public static final String CUDA = "io.datamem:allocator-cuda";
    /** The Maven coordinates of the SYCL backend. */
    public static final String SYCL = "io.datamem:allocator-sycl";
    /** The Maven coordinates of the UCX module. */
    public static final String UCX = "io.datamem:allocator-ucx";
    /** The document that says which artifact to add for which family. */
    public static final String DOC = "docs/getting-started.md";

    /**
     * One family of handler-name terms.
     *
     * @param name      the family, as providers name it ({@link DataMemProvider#name()})
     * @param role      where its terms go
     * @param artifact  the Maven coordinates of the artifact that provides it
     * @param prefix    whether a term belongs to it when its text merely starts with the name
     *                  ({@code aligned64}), not only when its family equals it
     * @param spellings correct terms of the family, for suggestions
     */
    public record Family(String name, Role role, String artifact, boolean prefix, List<String> spellings) {

        /**
         * Whether a term belongs to this family.
         *
         * @param term a term
         * @return whether it does
         */
        public boolean matches(ProviderTerm term) {
            return prefix ? term.text().startsWith(name) : term.family().equals(name);
        }
    }

    private static final List<Family> KNOWN = List.of(
            new Family(BuiltinProvider.DEFAULT_NAME, Role.LEAF, "io.datamem:allocator-api", false,
                    List.of(BuiltinProvider.DEFAULT_NAME)),
            new Family("aligned", Role.LEAF, IMPL, true, List.of("aligned64", "aligned:4096")),
            new Family("hugepages", Role.LEAF, IMPL, false,
                    List.of("hugepages", "hugepages:thp", "hugepages:2m", "hugepages:1g")),
            new Family("numa", Role.LEAF, IMPL, false,
                    List.of("numa:local", "numa:bind=0", "numa:interleave=0,1", "numa:preferred=0", "numa:firsttouch")),
            new Family("pool", Role.LEAF, IMPL, false, List.of("pool(aligned64)")),
            new Family("shared", Role.LEAF, IMPL, false, List.of("shared", "pool(shared)")),
            new Family("cuda", Role.LEAF, CUDA, false,
                    List.of("cuda:pinned", "cuda:device=0", "cuda:managed=0", "cuda:registered(aligned64)")),
            new Family("sycl", Role.LEAF, SYCL, false, List.of("sycl:host", "sycl:shared", "sycl:device")),
            // Both a leaf (UCX allocates) and an adaptor (registers its upstream's blocks): one artifact.
            new Family("ucx", Role.LEAF, UCX, false, List.of("ucx", "aligned64+ucx")),
            new Family("stats", Role.ADAPTOR, IMPL, false, List.of("stats")),
            new Family("tracking", Role.ADAPTOR, IMPL, false,
                    List.of("tracking", "tracking=off", "tracking=sampled", "tracking=full")),
            new Family("limit", Role.ADAPTOR, IMPL, false, List.of("limit=1g")),
            new Family("guard", Role.ADAPTOR, IMPL, false, List.of("guard", "guard=record")),
            new Family("log", Role.ADAPTOR, IMPL, false, List.of("log=FILE")),
            new Family("faults", Role.ADAPTOR, IMPL, false, List.of("faults=nth:1", "faults=every:10", "faults=random:0.1")),
            new Family("jfr", Role.ADAPTOR, IMPL, false, List.of("jfr")));

    private HandlerFamilies() {
    }

    /**
     * Every family datamem's artifacts provide.
     *
     * @return the families, leaves first
     */
    public static List<Family> known() {
        return KNOWN;
    }

    /**
     * The known family a term belongs to.
     *
     * @param term a term
     * @return the family, or empty if the term is of no family datamem knows
     */
    public static Optional<Family> of(ProviderTerm term) {
        return KNOWN.stream().filter(f -> f.matches(term)).findFirst();
    }

    /**
     * The known family of a term, when no provider of that family is among those loaded: its
     * artifact is missing.
     *
     * @param term      a term no loaded provider accepts
     * @param providers the providers loaded
     * @return the family whose artifact is missing, or empty
     */
    public static Optional<Family> missing(ProviderTerm term, List<DataMemProvider> providers) {
        return of(term).filter(f -> providers.stream().noneMatch(p -> p.name().equals(f.name())));
    }

    /**
     * The correct spellings closest to a term, by edit distance, if any is close enough to be a
     * likely typo.
     *
     * @param term      a term no provider accepts
     * @param providers the providers loaded (their families count as spellings too)
     * @return up to three spellings, closest first; empty if none is close
     */
    public static List<String> suggestions(ProviderTerm term, List<DataMemProvider> providers) {
        String text = term.text();
        Set<String> candidates = new LinkedHashSet<>();
        Set<String> families = new LinkedHashSet<>();
        for (Family f : KNOWN) {
            candidates.addAll(f.spellings());
            families.add(f.name());
        }
        for (DataMemProvider p : providers) {
            candidates.add(p.name());
            families.add(p.name());
        }
        String family = term.family();
        String rest = text.substring(family.length());
        for (String f : families) {
            candidates.add(f + rest); // the options as written, under a correctly spelt family
        }
        candidates.remove(text);
        int limit = Math.max(1, Math.min(3, text.length() / 4));
        int best = limit + 1;
        List<String> found = new ArrayList<>();
        for (String c : candidates) {
            int d = distance(text, c, limit);
            if (d > limit) {
                continue;
            }
            if (d < best) {
                best = d;
                found.clear();
            }
            if (d == best && found.size() < 3) {
                found.add(c);
            }
        }
        return List.copyOf(found);
    }

    /**
     * The families, in one short line: those of the providers loaded (marked when unavailable
     * here), leaves then adaptors, then the known families whose artifacts are absent.
     *
     * @param providers the providers loaded
     * @return for example {@code default_allocator, aligned, pool; adaptors after '+': stats; with
     *         io.datamem:allocator-cuda: cuda}
     */
    public static String line(List<DataMemProvider> providers) {
        StringJoiner leaves = new StringJoiner(", ");
        StringJoiner adaptors = new StringJoiner(", ");
        for (DataMemProvider p : providers) {
            String name = p.availability().available() ? p.name() : p.name() + " (unavailable here)";
            (p.role() == Role.LEAF ? leaves : adaptors).add(name);
        }
        StringBuilder b = new StringBuilder(leaves.toString());
        if (adaptors.length() > 0) {
            b.append("; adaptors after '+': ").append(adaptors);
        }
        for (String artifact : List.of(IMPL, CUDA, SYCL, UCX)) {
            StringJoiner absent = new StringJoiner(", ");
            for (Family f : KNOWN) {
                if (f.artifact().equals(artifact) && providers.stream().noneMatch(p -> p.name().equals(f.name()))) {
                    absent.add(f.name());
                }
            }
            if (absent.length() > 0) {
                b.append("; with ").append(artifact).append(": ").append(absent);
            }
        }
        return b.toString();
    }

    /** The Levenshtein distance of two strings, or {@code limit + 1} if it is above {@code limit}. */
    static int distance(String a, String b, int limit) {
        if (Math.abs(a.length() - b.length()) > limit) {
            return limit + 1;
        }
        int[] previous = new int[b.length() + 1];
        int[] row = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            row[0] = i;
            int rowMin = row[0];
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                row[j] = Math.min(Math.min(row[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
                rowMin = Math.min(rowMin, row[j]);
            }
            if (rowMin > limit) {
                return limit + 1;
            }
            int[] t = previous;
            previous = row;
            row = t;
        }
        return Math.min(previous[b.length()], limit + 1);
    }
}
