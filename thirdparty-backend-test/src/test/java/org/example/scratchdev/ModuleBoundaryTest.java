package org.example.scratchdev;

import io.datamem.DataMemAllocator;
import io.datamem.spi.DataMemProvider;
import org.example.scratchdev.provider.ScratchProvider;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What this module proves: a backend built on datamem's exported API alone. Its descriptor requires
 * {@code io.datamem.api} and nothing else of datamem, no class of it names anything in
 * {@code io.datamem.internal} (read from the compiled classes' constant pools), and at run time,
 * on the module path, {@code io.datamem.api} exports it no internal package while the registry
 * finds its provider through the module's {@code provides}.
 */
class ModuleBoundaryTest {

    private static final Path CLASSES = Path.of("target", "classes");
    private static final String MODULE = "org.example.scratchdev";

    @Test
    void theDescriptorRequiresTheApiOnly() throws IOException {
        ModuleDescriptor d;
        try (InputStream in = Files.newInputStream(CLASSES.resolve("module-info.class"))) {
            d = ModuleDescriptor.read(in);
        }
        assertEquals(MODULE, d.name());
        assertEquals(Set.of("io.datamem.api", "java.base"),
                d.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet()));
        assertEquals(Set.of(MODULE), d.exports().stream().map(e -> {
            assertFalse(e.isQualified(), e.toString());
            return e.source();
        }).collect(Collectors.toSet()));
        assertTrue(d.opens().isEmpty(), "opens nothing: " + d.opens());
        assertEquals(Set.of(DataMemProvider.class.getName() + " with " + List.of(ScratchProvider.class.getName())),
                d.provides().stream().map(p -> p.service() + " with " + p.providers()).collect(Collectors.toSet()));
    }

    @Test
    void noClassNamesADatamemInternalPackage() throws IOException {
        Set<String> offending = new TreeSet<>();
        int classes = 0;
        try (Stream<Path> files = Files.walk(CLASSES)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                ClassModel model = ClassFile.of().parse(file);
                classes++;
                for (PoolEntry entry : model.constantPool()) {
                    if (entry instanceof Utf8Entry utf8) {
                        String s = utf8.stringValue();
                        if (s.contains("io/datamem/internal") || s.contains("io.datamem.internal")) {
                            offending.add(CLASSES.relativize(file) + ": " + s);
                        }
                    }
                }
            }
        }
        assertTrue(classes >= 7, "the main classes were compiled: " + classes);
        assertEquals(Set.of(), offending, "constant-pool entries naming datamem's internal packages");
    }

    @Test
    void onTheModulePathTheApiExportsThisModuleNothingInternal() {
        Module self = ScratchDevice.class.getModule();
        Module api = DataMemAllocator.class.getModule();
        assertTrue(self.isNamed(), "the tests run on the module path (useModulePath in this module's pom)");
        assertEquals(MODULE, self.getName());
        assertEquals("io.datamem.api", api.getName());
        assertTrue(self.canRead(api));
        for (String p : api.getPackages()) {
            boolean internal = p.startsWith("io.datamem.internal");
            assertEquals(!internal, api.isExported(p, self), p);
            if (internal) {
                assertFalse(api.isOpen(p, self), p);
            }
        }
        DataMemProvider found = DataMemProvider.installed().stream().filter(p -> p instanceof ScratchProvider)
                .findFirst().orElseThrow();
        assertEquals(self, found.getClass().getModule(), "the registry found the provider in the named module");
    }
}
