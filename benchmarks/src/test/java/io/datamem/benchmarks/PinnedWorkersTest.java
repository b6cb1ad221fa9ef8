package io.datamem.benchmarks;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PinnedWorkersTest {

    /** The CPUs the calling thread may run on, as Linux lists them ({@code 0}, {@code 0-1}). */
    private static String allowedHere() throws IOException {
        return Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
                .filter(l -> l.startsWith("Cpus_allowed_list:")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                .findFirst().orElseThrow();
    }

    @Test
    void eachWorkerRunsOnItsOwnCpuInTurn() throws Exception {
        List<Integer> cpus = PinnedWorkers.allowedCpus();
        assertFalse(cpus.isEmpty(), "this Linux machine lets a process read its CPUs");
        int workers = 3;
        PinnedWorkers pool = new PinnedWorkers(workers, "test");
        try {
            CountDownLatch all = new CountDownLatch(workers);   // every task on a worker of its own
            List<Future<String>> where = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                where.add(pool.submit(() -> {
                    all.countDown();
                    all.await();
                    return Thread.currentThread().getName() + "=" + allowedHere();
                }));
            }
            List<String> seen = new ArrayList<>();
            for (Future<String> f : where) {
                seen.add(f.get());
            }
            for (int k = 0; k < workers; k++) {
                String expected = "test-jmh-worker-" + (k + 1) + "=" + cpus.get(k % cpus.size());
                assertEquals(1, seen.stream().filter(expected::equals).count(), expected + " in " + seen);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theFirstCpuCanBeMoved() throws Exception {
        List<Integer> cpus = PinnedWorkers.allowedCpus();
        String previous = System.setProperty(PinnedWorkers.FIRST_CPU_PROPERTY, "1");
        try {
            PinnedWorkers pool = new PinnedWorkers(1, "second");
            try {
                assertEquals(String.valueOf(cpus.get(1 % cpus.size())), pool.submit(PinnedWorkersTest::allowedHere).get());
            } finally {
                pool.shutdownNow();
            }
            System.setProperty(PinnedWorkers.FIRST_CPU_PROPERTY, "-1");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PinnedWorkers(1, "x"));
            assertEquals("datamem.bench.firstCpu=-1: expected a non-negative integer (an index into the CPUs the JVM"
                    + " may run on)", e.getMessage());
        } finally {
            if (previous == null) {
                System.clearProperty(PinnedWorkers.FIRST_CPU_PROPERTY);
            } else {
                System.setProperty(PinnedWorkers.FIRST_CPU_PROPERTY, previous);
            }
        }
    }
}
