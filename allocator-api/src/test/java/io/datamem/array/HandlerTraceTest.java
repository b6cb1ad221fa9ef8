package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The debug log of which handler each array came from. The log is switched on when the first array
 * is created, so each case runs in a fresh JVM.
 */
class HandlerTraceTest {

    /** The child JVM's program: arrays in a block, on a common-pool worker, and in a bound pool. */
    public static void main(String[] args) throws Exception {
        DataMemHandler h = DataMemHandler.of("traced-block", DataMem.builtinDefault().allocator());
        NDArray.zeros(DType.FLOAT64, 2, 3).close();
        CountDownLatch done = new CountDownLatch(1);
        DataMem.runWith(h, () -> {
            NDArray.empty(DType.INT32, 4).close();
            ForkJoinPool.commonPool().execute(() -> {
                NDArray.zeros(DType.INT8, 5).close();
                done.countDown();
            });
        });
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new AssertionError("the common-pool task did not run");
        }
        try (ForkJoinPool pool = DataMem.newForkJoinPool(h, 2)) {
            pool.submit(() -> NDArray.zeros(DType.INT16, 6).close()).join();
        }
        System.out.println("child done");
    }

    private static String run(boolean logging, String... jvmOptions) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(List.of(jvmOptions));
        if (logging) {
            Path config = Files.createTempFile("datamem-trace", ".properties");
            Files.writeString(config, """
                    handlers=java.util.logging.ConsoleHandler
                    java.util.logging.ConsoleHandler.level=FINE
                    java.util.logging.SimpleFormatter.format=%4$s %5$s%n
                    io.datamem.array.handler.level=FINE
                    """);
            config.toFile().deleteOnExit();
            cmd.add("-Djava.util.logging.config.file=" + config);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), HandlerTraceTest.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("child done"), out);
        return out;
    }

    @Test
    void eachArraySaysWhichHandlerItUsedFromWhichThreadAndWhereTheHandlerCameFrom() throws Exception {
        String out = run(true);
        assertTrue(out.contains("NDArray[float64, shape [2, 3]] allocated through handler 'default_allocator'"
                + " (process default: no handler bound on this thread) on thread 'main'"), out);
        assertTrue(out.contains("NDArray[int32, shape [4]] allocated through handler 'traced-block'"
                + " (scoped binding) on thread 'main'"), out);
        String worker = out.lines().filter(l -> l.contains("NDArray[int8, shape [5]]")).findFirst().orElse("");
        assertTrue(worker.contains("handler 'default_allocator' (process default")
                && worker.contains("thread 'ForkJoinPool.commonPool-worker-")
                && worker.contains("DataMem.newForkJoinPool"), "the silent case is visible: " + out);
        String pooled = out.lines().filter(l -> l.contains("NDArray[int16, shape [6]]")).findFirst().orElse("");
        assertTrue(pooled.contains("handler 'traced-block' (scoped binding)") && pooled.contains("worker"), out);
    }

    @Test
    void anArrayOfTheProcessDefaultOnAParallelStreamWorkerIsWarnedAboutOnceByDefault() throws Exception {
        String out = run(false);
        String warning = "does not reach parallel-stream workers";
        assertEquals(1, out.lines().filter(l -> l.contains(warning)).count(), out);
        assertTrue(out.contains("NDArray[int8, shape [5]] was allocated through the process default, handler"
                + " 'default_allocator', on common-pool worker 'ForkJoinPool.commonPool-worker-"), out);
        assertFalse(run(false, "-D" + HandlerTrace.WARN_PROPERTY + "=false").contains(warning));
    }

    @Test
    void theLogIsOffByDefault() throws Exception {
        assertFalse(run(false).contains("allocated through handler"));
        assertFalse(HandlerTrace.ENABLED, "off in this JVM, which does not configure the logger");
    }
}
