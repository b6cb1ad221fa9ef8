/**
 * The adaptors, each an {@link io.datamem.impl.AllocatorAdaptor} over an upstream allocator:
 * {@link io.datamem.impl.adaptor.StatisticsAdaptor} ({@code +stats}),
 * {@link io.datamem.impl.adaptor.TrackingAdaptor} ({@code +tracking}, recording the calls it refuses as
 * {@link io.datamem.impl.adaptor.Misuse}s),
 * {@link io.datamem.impl.adaptor.LimitingAdaptor} ({@code +limit=BYTES}),
 * {@link io.datamem.impl.adaptor.GuardAdaptor} ({@code +guard}, reporting
 * {@link io.datamem.impl.adaptor.Misuse}s, by default as a
 * {@link io.datamem.impl.adaptor.GuardViolationException}),
 * {@link io.datamem.impl.adaptor.LoggingAdaptor} ({@code +log=FILE}, a log in the format its javadoc
 * states, replayed by the command line's {@code datamem replay}),
 * {@link io.datamem.impl.adaptor.FailureInjectingAdaptor} ({@code +faults=...}), and the
 * {@code +jfr} adaptor, which has no interface here (it declares nothing a user calls: its JDK Flight
 * Recorder events are documented in docs/observability.md).
 *
 * <p>Each adaptor here is an interface declaring what a user does with a built layer; handler
 * names are the one way to configure one, and the implementations are not exported. A stack is
 * built by name ({@code DataMem.handler("default_allocator+stats+limit=1g")}), or over an upstream
 * that has no name with {@code AllocatorStack.on(upstream).with("stats")}, and a layer is found
 * with {@code AllocatorStack.find(handler, StatisticsAdaptor.class)} ({@link io.datamem.impl.AllocatorStack}).
 *
 * <p>Every adaptor takes its upstream first, forwards {@code free} with exactly the size it was
 * given, and leaves its accounting unchanged when the upstream fails. Null policy: no method
 * accepts or returns null unless documented. Threading: every adaptor is thread-safe.
 */
package io.datamem.impl.adaptor;
