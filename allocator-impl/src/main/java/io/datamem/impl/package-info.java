/**
 * datamem's CPU allocators and adaptors: the adaptor contract, stacks of adaptors, and the map of
 * this module's packages.
 * <ul>
 *   <li>this package: {@link io.datamem.impl.AllocatorAdaptor}, the shape of every adaptor,
 *       {@link io.datamem.impl.ForwardingAllocator}, the base that forwards every call so that an
 *       adaptor overrides only what it changes, and
 *       {@link io.datamem.impl.AllocatorStack}, which builds stacks of adaptors on a leaf and finds
 *       a layer in them;</li>
 *   <li>the leaf of aligned host memory is reached by name only ({@code aligned64},
 *       {@code aligned:N}, for example {@code DataMem.handler("aligned:4096").allocator()}); the C
 *       library's {@code malloc} family, the leaf of {@code default_allocator}, is
 *       {@code DataMem.builtinDefault().allocator()};</li>
 *   <li>{@link io.datamem.impl.adaptor}: the adaptors ({@code +stats}, {@code +tracking},
 *       {@code +limit}, {@code +guard}, {@code +log}, {@code +faults}, {@code +jfr});</li>
 *   <li>{@link io.datamem.impl.placement}: huge pages ({@code hugepages...}) and NUMA
 *       ({@code numa:...});</li>
 *   <li>{@link io.datamem.impl.pool}: {@link io.datamem.impl.pool.PoolingAllocator}
 *       ({@code pool(UPSTREAM)});</li>
 *   <li>{@link io.datamem.impl.micrometer}: Micrometer metrics, for applications that have
 *       Micrometer.</li>
 * </ul>
 * The handler names resolve through providers that this module does not export, each in the
 * package of the implementation it builds.
 *
 * <p>Allocators are leaves; adaptors wrap an upstream allocator given first to their factory,
 * forward {@code free} with exactly the size they were given, and leave their accounting unchanged
 * when the upstream fails. Null policy: no method accepts or returns null unless documented.
 * Threading: every allocator and adaptor of this module is thread-safe.
 */
package io.datamem.impl;
