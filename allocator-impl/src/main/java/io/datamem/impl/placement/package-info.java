/**
 * Where host memory lives: huge pages and NUMA nodes.
 * <ul>
 *   <li>{@link io.datamem.impl.placement.HugePageAllocator} (handler names {@code hugepages},
 *       {@code hugepages:2m}, {@code hugepages:1g}) with {@link io.datamem.impl.placement.HugePages},
 *       what the machine offers;</li>
 *   <li>{@link io.datamem.impl.placement.NumaAllocator} ({@code numa:...}) with
 *       {@link io.datamem.impl.placement.NumaTopology}, {@link io.datamem.impl.placement.NumaPolicy},
 *       {@link io.datamem.impl.placement.NumaTarget} and
 *       {@link io.datamem.impl.placement.NumaPlacement}. NUMA needs LWJGL's hwloc binding, an
 *       optional dependency of this module.</li>
 * </ul>
 * The two compose: NUMA-bound huge pages are a {@code NumaAllocator} over a
 * {@code HugePageAllocator} ({@code numa:...(hugepages...)}).
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: the allocators
 * are thread-safe.
 */
package io.datamem.impl.placement;
