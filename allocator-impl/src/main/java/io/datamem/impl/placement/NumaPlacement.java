package io.datamem.impl.placement;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Where the pages of one block of a {@link NumaAllocator} are, compared with where they were asked
 * to be: the placement report of {@link NumaAllocator#placement}.
 *
 * <p>Pages get a node when they are first touched, so a block nobody has written yet has no
 * resident pages and nothing to verify ({@link #touched()} is false). {@code actualNodes} is
 * hwloc's answer ({@code hwloc_get_area_memlocation}); {@code pagesPerNode} counts the pages on
 * each node (the kernel's {@code move_pages} query), sampling one base page per page of the block's
 * page size.
 *
 * @param address      the block
 * @param byteSize     its size
 * @param policy       the policy it was bound with
 * @param targetNodes  the nodes the policy named for it, ascending (every node for first-touch)
 * @param actualNodes  the nodes its resident pages are on, ascending
 * @param pagesPerNode resident pages per node id, by ascending id
 * @param pageSize     the size of the pages counted
 * @param totalPages   the pages the block spans
 */
public record NumaPlacement(long address, long byteSize, NumaPolicy policy, List<Integer> targetNodes,
                            List<Integer> actualNodes, Map<Integer, Long> pagesPerNode, long pageSize,
                            long totalPages) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if a component is null
     * @throws IllegalArgumentException if a count is negative or the resident pages exceed the total
     */
    public NumaPlacement {
        Objects.requireNonNull(policy, "policy");
        targetNodes = List.copyOf(new TreeSet<>(targetNodes));
        actualNodes = List.copyOf(new TreeSet<>(actualNodes));
        pagesPerNode = java.util.Collections.unmodifiableMap(new TreeMap<>(pagesPerNode));
        long resident = pagesPerNode.values().stream().mapToLong(Long::longValue).sum();
        if (byteSize < 0 || pageSize <= 0 || totalPages < 0 || resident > totalPages
                || pagesPerNode.values().stream().anyMatch(n -> n < 0)) {
            throw new IllegalArgumentException("placement of " + byteSize + " bytes: " + resident + " of " + totalPages
                    + " pages of " + pageSize + " (expected: non-negative counts, resident <= total)");
        }
    }

    /**
     * The pages of the block that are in memory (touched).
     *
     * @return a count
     */
    public long residentPages() {
        return pagesPerNode.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Whether any page of the block has been touched, so that there is a placement to verify.
     *
     * @return true if some page is resident
     */
    public boolean touched() {
        return !actualNodes.isEmpty() || residentPages() > 0;
    }

    /**
     * Whether the resident pages are where the policy asked: on the target nodes (for bind,
     * preferred and interleave; a preferred block may legitimately spill elsewhere when its nodes are
     * full, which this reports as a mismatch all the same). First-touch places pages wherever they
     * are touched, so it always matches.
     *
     * @return true if every resident page is on a target node
     */
    public boolean matches() {
        return policy == NumaPolicy.FIRST_TOUCH || targetNodes.containsAll(actualNodes);
    }

    @Override
    public String toString() {
        String perNode = pagesPerNode.entrySet().stream().map(e -> "node " + e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", "));
        return String.format(Locale.ROOT, "0x%x, %d bytes, %s %s: %d of %d pages of %s resident%s%s", address,
                byteSize, policy.spec(), NumaTopology.nodeNames(targetNodes), residentPages(), totalPages,
                HugePages.sizeName(pageSize), perNode.isEmpty() ? "" : " (" + perNode + ")",
                !touched() ? ", not touched yet" : matches() ? ", as asked" : ", NOT on the target nodes: on "
                        + NumaTopology.compact(actualNodes));
    }
}
