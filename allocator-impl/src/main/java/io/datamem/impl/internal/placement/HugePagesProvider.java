package io.datamem.impl.internal.placement;

import io.datamem.DataMemAllocator;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;

/**
 * Provides {@code hugepages}, {@code hugepages:2m}, {@code hugepages:1g} with the options
 * {@code fallback=fail|thp|normal} and {@code threshold=BYTES}, and an optional upstream in
 * parentheses: {@code hugepages:2m,fallback=thp,threshold=8m(aligned64)}. A NUMA upstream
 * ({@code hugepages:2m(numa:bind=0)}) builds NUMA-bound huge pages, the same allocator as
 * {@code numa:bind=0(hugepages:2m)}.
 */
public final class HugePagesProvider implements DataMemProvider {

    static final String FAMILY = "hugepages";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public HugePagesProvider() {
    }

    @Override
    public String name() {
        return FAMILY;
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("hugepages (transparent)", "hugepages:2m", "hugepages:1g",
                "hugepages:...,fallback=fail|thp|normal,threshold=N(UPSTREAM)");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(FAMILY);
    }

    @Override
    public Availability availability() {
        return LinuxMemory.supported() ? Availability.AVAILABLE
                : Availability.unavailable("huge pages need Linux; this is " + System.getProperty("os.name"));
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        HugePageAllocatorImpl.parse(term, context.handlerName());
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        HugePageAllocatorImpl.Builder b = HugePageAllocatorImpl.parse(term, context.handlerName());
        String nested = term.nested();
        if (nested == null) {
            return b.build();
        }
        DataMemAllocator upstream = context.resolveAllocator(nested);
        if (upstream instanceof NumaAllocatorImpl numa) {
            // NUMA-bound huge pages: the same allocator as numa:...(hugepages...)
            return numa.toBuilder().upstream(b.build()).name(context.handlerName()).build();
        }
        return b.upstream(upstream).build();
    }


}
