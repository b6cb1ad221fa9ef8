package io.datamem.impl.os;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The optional dependencies of {@code io.datamem.impl} ({@code requires static} in its module
 * declaration): whether each is usable here and, when not, what to add. Internal.
 *
 * <p>On the module path a {@code requires static} dependency is read only if something else
 * resolved it ({@code --add-modules}, or a {@code requires} in the application's module); on the
 * class path it is usable when its classes are there (JDK modules: when the runtime has them).
 * Nothing here loads a class of the dependency, so the checks are safe to run when it is absent
 * and cost nothing when it is present but unused.
 */
public enum OptionalModules {

    /** LWJGL's hwloc binding and its bundled libraries: NUMA handlers and topology. */
    HWLOC(List.of("org.lwjgl.hwloc", "org.lwjgl.hwloc.natives", "org.lwjgl.natives"), "org.lwjgl.util.hwloc.HWLoc",
            "org.lwjgl:lwjgl and org.lwjgl:lwjgl-hwloc, each with its natives-linux jar"),
    /** JDK Flight Recorder: the {@code jfr} adaptor. */
    JFR(List.of("jdk.jfr"), "jdk.jfr.Event", "a Java runtime that has the jdk.jfr module");

    private final List<String> modules;
    private final String probeClass;
    private final String artifacts;
    private volatile Optional<String> missing;

    OptionalModules(List<String> modules, String probeClass, String artifacts) {
        this.modules = modules;
        this.probeClass = probeClass;
        this.artifacts = artifacts;
    }

    /**
     * Why the dependency cannot be used here, or empty when it can.
     *
     * @return the reason, naming what to add
     */
    public Optional<String> missing() {
        Optional<String> m = missing;
        if (m == null) {
            m = check();
            missing = m;
        }
        return m;
    }

    /**
     * Fails unless the dependency can be used here.
     *
     * @param feature what needs it, for the message (for example {@code "NUMA topology"})
     * @throws IllegalStateException if it cannot be used, saying what to add
     */
    public void require(String feature) {
        missing().ifPresent(reason -> {
            throw new IllegalStateException(feature + " is unavailable: " + reason);
        });
    }

    private Optional<String> check() {
        Module self = OptionalModules.class.getModule();
        if (self.isNamed()) {
            ModuleLayer layer = self.getLayer() != null ? self.getLayer() : ModuleLayer.boot();
            List<String> absent = new ArrayList<>();
            for (String name : modules) {
                Optional<Module> m = layer.findModule(name);
                if (m.isEmpty() || !self.canRead(m.get())) {
                    absent.add(name);
                }
            }
            if (absent.isEmpty()) {
                return Optional.empty();
            }
            String list = String.join(",", absent);
            return Optional.of("module" + (absent.size() > 1 ? "s " : " ") + list + " not resolved (io.datamem.impl "
                    + "requires " + (absent.size() > 1 ? "them" : "it") + " only statically): run with --add-modules "
                    + list + " or require " + (absent.size() > 1 ? "them" : "it") + " from your module, and put "
                    + artifacts + " on the module path");
        }
        // looks the class file up without loading the class (listing providers loads no LWJGL class)
        ClassLoader loader = OptionalModules.class.getClassLoader();
        String resource = probeClass.replace('.', '/') + ".class";
        boolean found = loader != null ? loader.getResource(resource) != null
                : ClassLoader.getSystemResource(resource) != null;
        if (!found && probeClass.startsWith("jdk.")) {
            found = ModuleLayer.boot().findModule(modules.getFirst()).isPresent();
        }
        return found ? Optional.empty() : Optional.of(probeClass + " is not on the class path: add " + artifacts);
    }
}
