package io.datamem.benchmarks;

import io.datamem.benchmarks.report.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NumPyTimingTest {

    @TempDir
    Path dir;

    @Test
    void theMediansIntervalComesFromOrderStatistics() {
        // n = 51: P(B <= 13) = 0.00031 <= 0.0005 < P(B <= 14) = 0.00088, so k = 14: values 14 and 38 (1-based)
        double[] v = IntStream.rangeClosed(1, 51).mapToDouble(i -> 100 + i).toArray();
        NumPyTiming.Spread s = NumPyTiming.Spread.of(v);
        assertEquals(126, s.median());
        assertEquals(114, s.low());
        assertEquals(138, s.high());
        assertEquals(12, s.error());
        assertEquals(113.5, s.q1());
        assertEquals(138.5, s.q3());
        assertEquals(101, s.min());
        assertEquals(151, s.max());
    }

    @Test
    void fewValuesGiveTheWholeRange() {
        NumPyTiming.Spread s = NumPyTiming.Spread.of(new double[] {3, 1, 2, 10});
        assertEquals(2.5, s.median());
        assertEquals(1, s.low());
        assertEquals(10, s.high());
        assertEquals(7.5, s.error());
        assertThrows(IllegalArgumentException.class, () -> NumPyTiming.Spread.of(new double[0]));
    }

    @Test
    void aMissingPythonIsNotedAndNothingIsInvented() throws Exception {
        Path out = dir.resolve("numpy.json");
        Path notes = dir.resolve("notes.txt");
        assertFalse(NumPyTiming.run(dir.resolve("no-such-python").toString(), 11, 0.001, new long[] {8}, out, notes));
        assertFalse(Files.exists(out));
        String note = Files.readString(notes);
        assertTrue(note.startsWith("NumPy\tnot measured: cannot run "), note);
    }

    @Test
    void pythonWithoutNumPyIsNoted() throws Exception {
        // a stand-in interpreter that ignores the script and answers as the script does without NumPy
        Path fake = dir.resolve("python-without-numpy");
        Files.writeString(fake, "#!/bin/sh\ncat >/dev/null\necho '{\"python\": \"CPython 3.0\", \"numpy\": null,"
                + " \"reason\": \"ModuleNotFoundError: No module named numpy\"}'\n");
        assertTrue(fake.toFile().setExecutable(true));
        Path out = dir.resolve("numpy.json");
        Path notes = dir.resolve("notes.txt");
        assertFalse(NumPyTiming.run(fake.toString(), 11, 0.001, new long[] {8}, out, notes));
        assertFalse(Files.exists(out));
        assertEquals("NumPy\tnot measured: NumPy cannot be imported by " + fake + " (CPython 3.0):"
                + " ModuleNotFoundError: No module named numpy\n", Files.readString(notes));
    }

    @Test
    void resultsAreWrittenAsJmhResults() throws Exception {
        Path fake = dir.resolve("python-with-numpy");
        Files.writeString(fake, "#!/bin/sh\ncat >/dev/null\necho '{\"python\": \"CPython 3.11.7\", \"numpy\":"
                + " \"2.4.6\", \"cases\": [{\"elements\": 8, \"statement\": \"s\", \"loops\": 1000,"
                + " \"ns\": [3, 1, 2, 10]}]}'\n");
        assertTrue(fake.toFile().setExecutable(true));
        Path out = dir.resolve("numpy.json");
        Path notes = dir.resolve("notes.txt");
        assertTrue(NumPyTiming.run(fake.toString(), 4, 0.001, new long[] {8}, out, notes));
        List<Result> rs = Result.parseAll(Files.readString(out));
        assertEquals(1, rs.size());
        Result r = rs.get(0);
        assertEquals("NumPy.lifecycle", r.benchmark());
        assertEquals("8", r.param("elements"));
        assertEquals("1000", r.param("loops"));
        assertEquals("4", r.param("repeats"));
        assertEquals(2.5, r.score());
        assertEquals(7.5, r.error());
        assertEquals(1, r.percentile(0));
        assertEquals(10, r.percentile(100));
        assertEquals("NumPy 2.4.6 on CPython 3.11.7", r.jdk().substring(4, r.jdk().indexOf(',')));
        assertTrue(Files.readString(notes).startsWith("NumPy\tNumPy 2.4.6 on CPython 3.11.7, timeit with garbage"
                + " collection off: 4 repeats of 1000 loops"), Files.readString(notes));
    }

    @Test
    void theRealScriptRunsWhereNumPyIs() throws Exception {
        Path out = dir.resolve("numpy.json");
        Path notes = dir.resolve("notes.txt");
        boolean measured = NumPyTiming.run("python3", 11, 0.001, new long[] {8}, out, notes);
        String note = Files.readString(notes);
        if (measured) {
            Result r = Result.parseAll(Files.readString(out)).get(0);
            assertTrue(r.score() > 0 && r.score() < 1e6, "ns per lifecycle: " + r.score());
            assertTrue(note.startsWith("NumPy\tNumPy "), note);
        } else {
            assertTrue(note.startsWith("NumPy\tnot measured: "), note);
        }
    }
}
