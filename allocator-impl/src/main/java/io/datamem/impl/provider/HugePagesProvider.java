package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.placement.HugePageAllocator.Fallback;
import io.datamem.impl.placement.HugePageAllocator.PageKind;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

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
    private static final String EXPECTED = "hugepages[:thp|2m|1g][,fallback=fail|thp|normal][,threshold=BYTES][(UPSTREAM)]";

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
        builder(term, context);
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        HugePageAllocator.Builder b = builder(term, context);
        String nested = term.nested();
        if (nested == null) {
            return b.build();
        }
        DataMemAllocator upstream = context.resolveAllocator(nested);
        if (upstream instanceof NumaAllocator numa) {
            // NUMA-bound huge pages: the same allocator as numa:...(hugepages...)
            return numa.toBuilder().upstream(b.build()).name(context.handlerName()).build();
        }
        return b.upstream(upstream).build();
    }

    /** Reads the term's options into a builder, without building: every check but the machine's. */
    private static HugePageAllocator.Builder builder(ProviderTerm term, ProviderContext context) {
        HugePageAllocator.Builder b = HugePageAllocator.builder().name(context.handlerName());
        List<Option> items;
        try {
            items = term.options(FAMILY);
        } catch (IllegalArgumentException e) {
            throw bad(context, term, e.getMessage());
        }
        PageKind pages = PageKind.TRANSPARENT;
        Fallback fallback = Fallback.FAIL;
        for (int i = 0; i < items.size(); i++) {
            Option item = items.get(i);
            String value = item.value();
            switch (item.key()) {
                case "thp", "transparent" -> pages = PageKind.TRANSPARENT;
                case "2m", "2M" -> pages = PageKind.HUGETLB_2M;
                case "1g", "1G" -> pages = PageKind.HUGETLB_1G;
                case "fallback" -> fallback = switch (value) {
                    case "fail", "none" -> Fallback.FAIL;
                    case "thp", "transparent" -> Fallback.TRANSPARENT;
                    case "normal" -> Fallback.NORMAL;
                    default -> throw bad(context, term, "fallback=" + value + " (expected: fail, thp or normal)");
                };
                case "threshold" -> {
                    try {
                        b.thresholdByteSize(ProviderTerm.byteSize("threshold", value, DataMemAllocator.MAX_BYTE_SIZE));
                    } catch (IllegalArgumentException e) {
                        throw bad(context, term, e.getMessage());
                    }
                }
                default -> throw bad(context, term, "unknown option " + Messages.quote(item.toString()));
            }
            if (!item.hasValue() && i > 0) {
                throw bad(context, term, "the page size " + Messages.quote(item.toString()) + " must come first");
            }
        }
        if (pages == PageKind.TRANSPARENT && fallback == Fallback.TRANSPARENT) {
            throw bad(context, term, "fallback: TRANSPARENT for transparent pages (expected: fail or normal)");
        }
        String nested = term.nested();
        if (nested != null && nested.isEmpty()) {
            throw bad(context, term, "empty parentheses (expected: an upstream handler name inside)");
        }
        return b.pages(pages).fallback(fallback);
    }

    private static IllegalArgumentException bad(ProviderContext context, ProviderTerm term, String what) {
        return new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                + Messages.quote(term.text()) + ": " + what + " (expected: " + EXPECTED + ")");
    }
}
