package io.datamem.examples.cuda;

import io.datamem.cuda.Cuda;
import io.datamem.examples.cli.DatamemCli;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pinned-staging example and the demo's CUDA part, on any machine: with a GPU they move data
 * and check it came back bit for bit (three chunks, the last one partial); without one they say,
 * in one line, that they are skipped and why.
 */
class PinnedStagingTest {

    private static String run(long byteSize, int[] status) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            status[0] = PinnedStaging.run(out, byteSize, 0);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void stagesThroughPinnedBuffersOrSaysWhyNot() {
        int[] status = new int[1];
        String out = run(2 * PinnedStaging.CHUNK_BYTE_SIZE + 12_345, status);
        if (Cuda.isAvailable()) {
            assertEquals(0, status[0], out);
            assertTrue(out.contains("round trip bit-exact: yes") && out.contains("GB/s"), out);
        } else {
            assertEquals(2, status[0], out);
            assertEquals("pinned staging: skipped, no GPU here: " + Cuda.availability().reason() + "\n", out);
        }
        assertThrows(IllegalArgumentException.class, () -> PinnedStaging.run(System.out, 0, 0));
    }

    @Test
    void theDemoShowsItsCudaPartOrOneLineSayingWhyItIsSkipped() {
        PrintStream stdout = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status;
        try (PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            status = DatamemCli.run("demo", "--elements", "1000");
        } finally {
            System.setOut(stdout);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, out);
        long cudaLines = out.lines().filter(l -> l.startsWith("cuda:")).count();
        assertEquals(1, cudaLines, out);
        if (Cuda.isAvailable()) {
            assertTrue(out.contains("through pool(cuda:pinned) and back: bit-exact"), out);
        } else {
            assertTrue(out.contains("cuda: skipped, no GPU here: " + Cuda.availability().reason()), out);
        }
    }
}
