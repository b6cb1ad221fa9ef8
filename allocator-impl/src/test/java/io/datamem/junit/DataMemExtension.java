package io.datamem.junit;

import io.datamem.impl.internal.adaptor.GuardAdaptorImpl;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.internal.adaptor.TrackingAdaptorImpl;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.AllocatorStack;
import io.datamem.impl.adaptor.GuardAdaptor;
import io.datamem.impl.adaptor.Misuse;
import io.datamem.impl.adaptor.StatisticsAdaptor;
import io.datamem.impl.adaptor.TrackingAdaptor;
import io.datamem.spi.ProviderTerm;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The JUnit 5 extension behind {@link CheckedMemory}; register it with {@code @CheckedMemory} (or
 * {@code @ExtendWith(DataMemExtension.class)} for the defaults). See {@link CheckedMemory}.
 */
public final class DataMemExtension implements BeforeEachCallback, AfterEachCallback, InvocationInterceptor,
        ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(DataMemExtension.class);
    private static final String KEY = "checked";

    /** Creates the extension (JUnit instantiates it). */
    public DataMemExtension() {
    }

    /**
     * A checked handler and its parts.
     *
     * @param handler  the handler bound during the test
     * @param tracking its tracker (outermost)
     * @param guard    its guard (under the tracker)
     */
    public record Checked(DataMemHandler handler, TrackingAdaptor tracking, GuardAdaptor guard) {

        /**
         * Builds a checked handler: the leaf of {@code name}, a guard on it, the adaptors of
         * {@code name} above the guard (so that they see the sizes callers ask for), and a tracker
         * on top: {@code aligned64+stats} becomes {@code aligned64+guard+stats+tracking}.
         *
         * @param name        the handler to check, by provider name
         * @param stackTraces the tracker's stack-trace level
         * @return the handler and its parts
         * @throws IllegalArgumentException if the name is malformed or unknown
         * @throws IllegalStateException    if a provider it needs is unavailable
         */
        public static Checked of(String name, TrackingAdaptorImpl.StackTraces stackTraces) {
            List<ProviderTerm> terms = ProviderTerm.split(name);
            String leaf = terms.getFirst().text();
            String adaptors = terms.stream().skip(1).map(ProviderTerm::text).collect(Collectors.joining("+"));
            GuardAdaptor guard = GuardAdaptorImpl.of(DataMem.createHandler(leaf).allocator());
            String full = leaf + "+guard" + (adaptors.isEmpty() ? "" : "+" + adaptors) + "+tracking";
            AllocatorStack.Builder stack = AllocatorStack.on(guard);
            if (!adaptors.isEmpty()) {
                stack.with(adaptors);
            }
            TrackingAdaptor tracking = TrackingAdaptorImpl.builder(stack.build()).stackTraces(stackTraces).build();
            return new Checked(DataMemHandler.of(full, tracking), tracking, guard);
        }

        /**
         * Checks every live block for corruption, releases the guard's quarantine (checking it for
         * writes after free), and reports leaks and violations.
         *
         * @return the report, or empty if all is well
         */
        public Optional<String> finish() {
            guard.check();
            guard.drainQuarantine();
            List<Misuse> violations = guard.violations();
            List<LiveBlock> live = tracking.liveAllocations();
            List<Misuse> problems = tracking.problems();
            if (violations.isEmpty() && live.isEmpty() && problems.isEmpty()) {
                return Optional.empty();
            }
            StringBuilder b = new StringBuilder();
            if (!live.isEmpty() || !problems.isEmpty()) {
                b.append(tracking.leakReport());
            }
            if (!violations.isEmpty()) {
                b.append(guard.report());
            }
            return Optional.of(b.toString());
        }
    }

    private static CheckedMemory settings(ExtensionContext context) {
        List<AnnotatedElement> places = new ArrayList<>();
        context.getTestMethod().ifPresent(places::add);
        for (Class<?> c = context.getTestClass().orElse(null); c != null; c = c.getEnclosingClass()) {
            places.add(c);
        }
        for (AnnotatedElement e : places) {
            CheckedMemory m = e.getAnnotation(CheckedMemory.class);
            if (m != null) {
                return m;
            }
        }
        return Defaults.class.getAnnotation(CheckedMemory.class);
    }

    @CheckedMemory
    private static final class Defaults {
    }

    /**
     * The checked handler of the running test.
     *
     * @param context the test's context
     * @return the handler and its parts
     * @throws IllegalStateException if the extension is not active for this test
     */
    public static Checked checked(ExtensionContext context) {
        Checked c = context.getStore(NAMESPACE).get(KEY, Checked.class);
        if (c == null) {
            throw new IllegalStateException("no checked handler: " + context.getDisplayName()
                    + " does not run under @CheckedMemory");
        }
        return c;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        CheckedMemory s = settings(context);
        context.getStore(NAMESPACE).put(KEY, Checked.of(s.value(), s.stackTraces()));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Checked c = context.getStore(NAMESPACE).remove(KEY, Checked.class);
        if (c == null) {
            return;
        }
        Optional<String> report = c.finish();
        if (report.isPresent()) {
            throw new AssertionError("datamem: " + context.getDisplayName() + " left memory problems in handler '"
                    + c.handler().name() + "':\n" + report.get());
        }
    }

    private <T> T bound(Invocation<T> invocation, ExtensionContext context) throws Throwable {
        Checked c = context.getStore(NAMESPACE).get(KEY, Checked.class);
        if (c == null) {
            return invocation.proceed();
        }
        return DataMem.callWith(c.handler(), invocation::proceed);
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
                                    ExtensionContext extensionContext) throws Throwable {
        bound(invocation, extensionContext);
    }

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation,
                                            ReflectiveInvocationContext<Method> invocationContext,
                                            ExtensionContext extensionContext) throws Throwable {
        bound(invocation, extensionContext);
    }

    @Override
    public void interceptBeforeEachMethod(Invocation<Void> invocation,
                                          ReflectiveInvocationContext<Method> invocationContext,
                                          ExtensionContext extensionContext) throws Throwable {
        bound(invocation, extensionContext);
    }

    @Override
    public void interceptAfterEachMethod(Invocation<Void> invocation,
                                         ReflectiveInvocationContext<Method> invocationContext,
                                         ExtensionContext extensionContext) throws Throwable {
        bound(invocation, extensionContext);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> t = parameterContext.getParameter().getType();
        return t == DataMemHandler.class || t == TrackingAdaptor.class || t == GuardAdaptor.class
                || t == StatisticsAdaptor.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Checked c = extensionContext.getStore(NAMESPACE).get(KEY, Checked.class);
        if (c == null) {
            throw new ParameterResolutionException("no checked handler for " + extensionContext.getDisplayName()
                    + " (parameters are resolved for test and @BeforeEach/@AfterEach methods only)");
        }
        Class<?> t = parameterContext.getParameter().getType();
        if (t == DataMemHandler.class) {
            return c.handler();
        }
        if (t == TrackingAdaptor.class) {
            return c.tracking();
        }
        if (t == GuardAdaptor.class) {
            return c.guard();
        }
        return AllocatorStack.find(c.handler(), StatisticsAdaptor.class).orElseThrow(() ->
                new ParameterResolutionException("handler '" + c.handler().name() + "' has no StatisticsAdaptor;"
                        + " name one with +stats, for example @CheckedMemory(\"default_allocator+stats\")"));
    }
}
