package io.datamem.impl.provider;

import io.datamem.DataMemAllocator;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.OptionalModules;
import io.datamem.impl.placement.NumaAllocator;
import io.datamem.impl.placement.NumaPolicy;
import io.datamem.impl.placement.NumaTarget;
import io.datamem.internal.Messages;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;
import io.datamem.spi.ProviderTerm.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Provides {@code numa:local}, {@code numa:bind=N}, {@code numa:interleave=N,M},
 * {@code numa:preferred=N}, {@code numa:firsttouch}, {@code numa:nexttouch=N}, targets
 * {@code local}, {@code all}, node lists and ranges, {@code pci:BUS_ID}; flags {@code strict} and
 * {@code populate}; an optional upstream in parentheses: {@code numa:bind=0(hugepages:2m)}.
 *
 * <p>{@link #availability()} does not load hwloc: it checks the platform and that the hwloc native
 * library is on the class path, so that listing providers stays cheap.
 */
public final class NumaProvider implements DataMemProvider {

    private static final String FAMILY = "numa";
    private static final String EXPECTED = "numa:local, numa:POLICY=TARGET[,strict][,populate][(UPSTREAM)] with POLICY "
            + "bind, preferred, interleave, firsttouch (no target) or nexttouch, and TARGET node ids (0,2 or 0-3), "
            + "local, all or pci:DOMAIN:BUS:DEVICE.FUNCTION";

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public NumaProvider() {
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
        return List.of("numa:local", "numa:bind=N", "numa:interleave=N,M", "numa:preferred=N", "numa:firsttouch",
                "numa:bind=pci:BUS_ID", "numa:...,strict,populate(UPSTREAM)");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(FAMILY);
    }

    @Override
    public Availability availability() {
        if (!LinuxMemory.supported()) {
            return Availability.unavailable("NUMA binding needs Linux; this is " + System.getProperty("os.name"));
        }
        Optional<String> hwloc = OptionalModules.HWLOC.missing();
        if (hwloc.isPresent()) {
            return Availability.unavailable("NUMA binding needs hwloc through LWJGL: " + hwloc.get());
        }
        String arch = switch (System.getProperty("os.arch", "")) {
            case "amd64", "x86_64" -> "x64";
            case "aarch64" -> "arm64";
            case "arm" -> "arm32";
            case "ppc64le" -> "ppc64le";
            case "riscv64" -> "riscv64";
            default -> System.getProperty("os.arch");
        };
        String library = "linux/" + arch + "/org/lwjgl/hwloc/libhwloc.so";
        ClassLoader loader = NumaProvider.class.getClassLoader();
        boolean onPath = loader != null && loader.getResource(library) != null
                || ModuleLayer.boot().findModule("org.lwjgl.hwloc.natives").isPresent();
        if (!onPath && System.getProperty("org.lwjgl.librarypath") == null) {
            return Availability.unavailable("the hwloc native library for linux/" + arch + " is not on the class path "
                    + "(add org.lwjgl:lwjgl-hwloc:natives-linux" + (arch.equals("x64") ? "" : "-" + arch)
                    + " and org.lwjgl:lwjgl:natives-linux" + (arch.equals("x64") ? "" : "-" + arch) + ")");
        }
        if (!Files.isDirectory(Path.of("/sys/devices/system/node"))) {
            return Availability.unavailable("this kernel exposes no NUMA nodes (/sys/devices/system/node is missing)");
        }
        return Availability.AVAILABLE;
    }

    @Override
    public void validate(ProviderTerm term, ProviderContext context) {
        builder(term, context);
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        NumaAllocator.Builder b = builder(term, context);
        String nested = term.nested();
        if (nested != null) {
            b.upstream(context.resolveAllocator(nested));
        }
        return b.build();
    }

    /** Reads the term's policy, target and flags into a builder, without building. */
    private static NumaAllocator.Builder builder(ProviderTerm term, ProviderContext context) {
        List<Option> items;
        try {
            items = term.options(FAMILY);
        } catch (IllegalArgumentException e) {
            throw bad(context, term, e.getMessage());
        }
        if (items.isEmpty()) {
            throw bad(context, term, "no policy");
        }
        NumaAllocator.Builder b = NumaAllocator.builder().name(context.handlerName());
        Option first = items.getFirst();
        String policyName = first.key().toLowerCase(Locale.ROOT);
        StringBuilder target = new StringBuilder(first.value());
        if (policyName.equals("local")) {
            if (first.hasValue()) {
                throw bad(context, term, "'local' takes no value");
            }
            b.policy(NumaPolicy.BIND).target(NumaTarget.local());
        } else {
            try {
                b.policy(NumaPolicy.ofSpec(policyName));
            } catch (IllegalArgumentException e) {
                throw bad(context, term, e.getMessage());
            }
        }
        for (Option option : items.subList(1, items.size())) {
            String item = option.toString();
            String flag = item.toLowerCase(Locale.ROOT);
            switch (flag) {
                case "strict" -> b.strict(true);
                case "populate" -> b.populate(true);
                default -> {
                    if (!target.isEmpty() && !target.toString().startsWith("pci:") && flag.matches("\\d+(-\\d+)?")) {
                        target.append(',').append(flag); // more node ids: interleave=0,1
                    } else {
                        throw bad(context, term, "unknown flag '" + item + "' (expected: strict or populate)");
                    }
                }
            }
        }
        if (!target.isEmpty()) {
            try {
                b.target(NumaTarget.parse(target.toString()));
            } catch (IllegalArgumentException e) {
                throw bad(context, term, e.getMessage());
            }
        } else if (!policyName.equals("local") && !policyName.equals("firsttouch")
                && !policyName.equals("first-touch")) {
            throw bad(context, term, "policy " + policyName + " needs a target, as in numa:" + policyName + "=0");
        }
        String nested = term.nested();
        if (nested != null && nested.isEmpty()) {
            throw bad(context, term, "empty parentheses (expected: an upstream handler name inside)");
        }
        return b;
    }

    private static IllegalArgumentException bad(ProviderContext context, ProviderTerm term, String what) {
        return new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                + Messages.quote(term.text()) + ": " + what + " (expected: " + EXPECTED + ")");
    }
}
