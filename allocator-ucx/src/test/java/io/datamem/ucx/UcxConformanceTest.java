package io.datamem.ucx;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against the {@code ucx} allocator and the {@code +ucx} adaptor over
 * {@code aligned64}, on a context of their own; no registration is left when it ends.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"ucx", "aligned64+ucx"})
class UcxConformanceTest extends AllocatorConformanceTest {

    private static UcxContext context;
    private final String name;

    UcxConformanceTest(String name) {
        this.name = name;
    }

    @BeforeAll
    static void open() {
        UcxTests.assumeUcx();
        context = UcxContext.open(UcxContext.Options.defaults().withName("conformance").withProgressThread(false));
    }

    @AfterAll
    static void close() {
        if (context != null) {
            assertEquals(0, context.liveRegistrations(), "registrations left after the suite: " + context);
            context.close();
        }
    }

    @Override
    protected DataMemAllocator allocator() {
        return name.equals("ucx") ? UcxAllocator.of(context) : UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(), context);
    }

    @Override
    protected String handlerName() {
        return name;
    }

    @Override
    protected int operationsPerThread() {
        return 300;
    }
}
