package io.datamem.impl.internal.placement;

import io.datamem.DataMemAllocator;
import io.datamem.impl.os.LinuxMemory;
import io.datamem.impl.os.OptionalModules;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
        NumaBuilder.parse(term, context.handlerName());
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        NumaBuilder b = NumaBuilder.parse(term, context.handlerName());
        String nested = term.nested();
        if (nested != null) {
            b.upstream(context.resolveAllocator(nested));
        }
        try {
            return b.build();
        } catch (UnsupportedOperationException notHere) {
            // A policy or binding this machine lacks: DataMem.handler/createHandler document that a
            // handler that cannot be made here is an IllegalStateException.
            throw new IllegalStateException("handler name '" + context.handlerName() + "': " + notHere.getMessage(),
                    notHere);
        }
    }


}
