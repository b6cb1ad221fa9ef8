package io.datamem.junit;

import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.impl.adaptor.TrackingAdaptor;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs each test (and its {@code @BeforeEach}/{@code @AfterEach} methods) with a fresh tracked and
 * guarded handler bound as {@link io.datamem.DataMem#current()}, and fails the test if, at its end,
 * a block is still live (a leak) or the guard or the tracker caught a misuse (wrong free size, double
 * free, foreign pointer, write past the end or before the start, write after free). The failure
 * message holds the report: each leaked block with its size, thread, time and allocation stack
 * trace, and each violation with its address, sizes and kind.
 *
 * <p>The handler is built from the provider name {@link #value()} ({@code default_allocator} by
 * default): a {@link io.datamem.impl.adaptor.GuardAdaptor} right on its leaf, its own adaptors above the
 * guard (so that they see the sizes callers ask for), and a {@link TrackingAdaptor} on top:
 * {@code aligned64+stats} runs as {@code aligned64+guard+stats+tracking}. Put it on a class or a method (the method's wins). Tests may
 * take a {@link io.datamem.DataMemHandler}, {@link TrackingAdaptor},
 * {@link io.datamem.impl.adaptor.GuardAdaptor} or {@link io.datamem.impl.adaptor.StatisticsAdaptor} (when the name
 * has {@code +stats}) parameter to reach the handler's parts.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(DataMemExtension.class)
public @interface CheckedMemory {

    /**
     * The handler to check, by provider name.
     *
     * @return for example {@code aligned64} or {@code aligned64+stats}
     */
    String value() default "default_allocator";

    /**
     * Which allocations get a stack trace for the leak report.
     *
     * @return {@code FULL} by default: every leak says where it was allocated
     */
    TrackingAdaptorImpl.StackTraces stackTraces() default TrackingAdaptorImpl.StackTraces.FULL;
}
