/**
 * Where host memory lives: huge pages and NUMA nodes.
 * <ul>
 *   <li>{@link io.datamem.impl.placement.HugePageAllocator}, what a huge-page layer made by name
 *       ({@code hugepages}, {@code hugepages:2m}, {@code hugepages:1g}) tells of its mappings,
 *       with {@link io.datamem.impl.placement.HugePages}, what the machine offers;</li>
 *   <li>{@link io.datamem.impl.placement.NumaAllocator}, what a NUMA layer made by name
 *       ({@code numa:...}) tells of its placement, with
 *       {@link io.datamem.impl.placement.NumaTopology} (the machine's nodes, distances and PCI
 *       devices), {@link io.datamem.impl.placement.NumaPolicy} and
 *       {@link io.datamem.impl.placement.NumaPlacement}. NUMA needs LWJGL's hwloc binding, an
 *       optional dependency of this module.</li>
 * </ul>
 * A layer is configured by its handler name only, and found in a handler with
 * {@code AllocatorStack.find(handler, NumaAllocator.class)}.
 * The two compose: NUMA-bound huge pages are a {@code NumaAllocator} over a
 * {@code HugePageAllocator} ({@code numa:...(hugepages...)}).
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the allocators
 * are thread-safe.
 */
package io.datamem.impl.placement;
