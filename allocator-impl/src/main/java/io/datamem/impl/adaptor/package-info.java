/**
 * The adaptors, each an {@link io.datamem.impl.AllocatorAdaptor} over an upstream allocator (all
 * but {@code StatisticsAdaptor}, whose counters sit on the fast path, extend
 * {@link io.datamem.impl.ForwardingAllocator}):
 * {@link io.datamem.impl.adaptor.StatisticsAdaptor} ({@code +stats}),
 * {@link io.datamem.impl.adaptor.TrackingAdaptor} ({@code +tracking}),
 * {@link io.datamem.impl.adaptor.LimitingAdaptor} ({@code +limit=BYTES}),
 * {@link io.datamem.impl.adaptor.GuardAdaptor} ({@code +guard}, reporting
 * {@link io.datamem.impl.adaptor.GuardViolation}s, by default as a
 * {@link io.datamem.impl.adaptor.GuardViolationException}),
 * {@link io.datamem.impl.adaptor.LoggingAdaptor} ({@code +log=FILE}, read and replayed by
 * {@link io.datamem.impl.adaptor.AllocationLog}),
 * {@link io.datamem.impl.adaptor.FailureInjectingAdaptor} ({@code +faults=...}) and
 * {@link io.datamem.impl.adaptor.JfrEventAdaptor} ({@code +jfr}). Stacks of them are built and
 * searched with {@link io.datamem.impl.AllocatorStack}.
 *
 * <p>Every adaptor takes its upstream first, forwards {@code free} with exactly the size it was
 * given, and leaves its accounting unchanged when the upstream fails. Null policy: no method
 * accepts or returns null unless documented. Threading: every adaptor is thread-safe.
 */
package io.datamem.impl.adaptor;
