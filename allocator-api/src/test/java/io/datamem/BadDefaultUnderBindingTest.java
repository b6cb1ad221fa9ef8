package io.datamem;

import io.datamem.array.DType;
import io.datamem.array.NDArray;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A process whose configured default cannot be used (an unknown name in {@code datamem.handler} or
 * {@code DATAMEM_HANDLER}) still allocates inside a binding: {@link DataMem#current()} consults the
 * default only when nothing is bound. Run in a child JVM, since the default is resolved once.
 */
class BadDefaultUnderBindingTest {

    /** The child: allocates under a binding, then asks for the default outside it. */
    public static void main(String[] args) {
        DataMemHandler bound = DataMemHandler.of("bound-here", LibcAllocator.INSTANCE);
        DataMem.runWith(bound, () -> {
            if (DataMem.current() != bound) {
                throw new AssertionError("current() under a binding is not the bound handler");
            }
            try (NDArray a = NDArray.zeros(DType.FLOAT64, 4)) {
                a.setDouble(1.5, 2);
                System.out.println("bound allocation ok: " + a.handler().name() + " " + a.getDouble(2));
            }
        });
        try {
            DataMem.current();
            System.out.println("unbound current() did not throw");
        } catch (IllegalStateException e) {
            System.out.println("unbound current() refused: " + e.getMessage());
        }
    }

    private static String child(String property, String env) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED"));
        if (property != null) {
            cmd.add("-Ddatamem.handler=" + property);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BadDefaultUnderBindingTest.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("DATAMEM_HANDLER");
        if (env != null) {
            pb.environment().put("DATAMEM_HANDLER", env);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void aBadPropertyDefaultDoesNotReachABoundBlock() throws Exception {
        String out = child("cuda:pinned-but-not-here", null);
        assertTrue(out.contains("bound allocation ok: bound-here 1.5"), out);
        assertTrue(out.contains("unbound current() refused") && out.contains("datamem.handler"), out);
    }

    @Test
    void aBadEnvironmentDefaultDoesNotReachABoundBlock() throws Exception {
        String out = child(null, "no-such-handler");
        assertTrue(out.contains("bound allocation ok: bound-here 1.5"), out);
        assertTrue(out.contains("unbound current() refused") && out.contains("DATAMEM_HANDLER"), out);
    }
}
