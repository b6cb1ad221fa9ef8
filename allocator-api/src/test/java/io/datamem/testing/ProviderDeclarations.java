package io.datamem.testing;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The check that a module declares the same service providers twice over: in its
 * {@code module-info} ({@code provides}: what the module path reads) and in
 * {@code META-INF/services} (what the class path reads). A provider listed in one and not the other
 * is a handler family that exists for one kind of user only.
 *
 * <p>Run from a module's directory (as Surefire does): it reads the compiled
 * {@code target/classes/module-info.class} and the source
 * {@code src/main/resources/META-INF/services/SERVICE}.
 */
public final class ProviderDeclarations {

    private ProviderDeclarations() {
    }

    /**
     * Asserts that this module provides {@code service} with the same, non-empty set of classes in
     * both places, and that every one of them is a class this module compiled.
     *
     * @param service the service interface's name, for example {@code io.datamem.spi.DataMemProvider}
     * @return the providers, sorted
     * @throws IOException if a file cannot be read
     */
    public static Set<String> assertSame(String service) throws IOException {
        Path classes = Path.of("target", "classes");
        Path descriptor = classes.resolve("module-info.class");
        assertTrue(Files.isRegularFile(descriptor), descriptor.toAbsolutePath() + " (run from a module's directory"
                + " after compiling it)");
        Set<String> declared;
        try (InputStream in = Files.newInputStream(descriptor)) {
            declared = ModuleDescriptor.read(in).provides().stream().filter(p -> p.service().equals(service))
                    .flatMap(p -> p.providers().stream()).collect(TreeSet::new, Set::add, Set::addAll);
        }
        Path services = Path.of("src", "main", "resources", "META-INF", "services", service);
        Set<String> listed = new TreeSet<>();
        if (Files.isRegularFile(services)) {
            List<String> lines = Files.readAllLines(services, StandardCharsets.UTF_8);
            for (String line : lines) {
                int hash = line.indexOf('#');
                String name = (hash < 0 ? line : line.substring(0, hash)).strip();
                if (!name.isEmpty()) {
                    assertTrue(listed.add(name), services + " lists " + name + " twice");
                }
            }
        }
        assertFalse(declared.isEmpty(), descriptor + " provides no " + service);
        assertEquals(declared, listed, "providers of " + service + ": module-info (expected) against " + services
                + " (actual)");
        for (String provider : declared) {
            Path file = classes.resolve(provider.replace('.', '/') + ".class");
            assertTrue(Files.isRegularFile(file), provider + " is declared but " + file + " is not compiled here");
        }
        return declared;
    }
}
