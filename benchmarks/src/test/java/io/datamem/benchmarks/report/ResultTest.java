package io.datamem.benchmarks.report;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ResultTest {

    // Shaped as JMH 1.37 writes it (-rf json), trimmed.
    static final String JMH_JSON = """
            [
                {
                    "jmhVersion" : "1.37",
                    "benchmark" : "io.datamem.benchmarks.AllocFreeDataMem.allocator",
                    "mode" : "avgt",
                    "threads" : 2,
                    "forks" : 1,
                    "jvm" : "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java",
                    "jvmArgs" : [ "--enable-native-access=ALL-UNNAMED" ],
                    "jdkVersion" : "25.0.3",
                    "vmName" : "OpenJDK 64-Bit Server VM",
                    "vmVersion" : "25.0.3+9-LTS",
                    "warmupIterations" : 2,
                    "warmupTime" : "400 ms",
                    "measurementIterations" : 3,
                    "params" : {
                        "byteSize" : "64",
                        "handler" : "pool(aligned64)"
                    },
                    "primaryMetric" : {
                        "score" : 12.5,
                        "scoreError" : 0.75,
                        "scoreConfidence" : [ 11.75, 13.25 ],
                        "scorePercentiles" : { "0.0" : 12.0, "50.0" : 12.5, "100.0" : 13.0 },
                        "scoreUnit" : "ns/op",
                        "rawData" : [ [ 12.0, 12.5, 13.0 ] ]
                    },
                    "secondaryMetrics" : { }
                },
                {
                    "jmhVersion" : "1.37",
                    "benchmark" : "io.datamem.benchmarks.CurrentHandler.current",
                    "mode" : "avgt",
                    "threads" : 1,
                    "jdkVersion" : "25.0.3",
                    "vmName" : "OpenJDK 64-Bit Server VM",
                    "vmVersion" : "25.0.3+9-LTS",
                    "primaryMetric" : {
                        "score" : 1.25,
                        "scoreError" : "NaN",
                        "scoreUnit" : "ns/op"
                    }
                }
            ]
            """;

    @Test
    void readsJmhResults() {
        List<Result> rs = Result.parseAll(JMH_JSON);
        assertEquals(2, rs.size());
        Result a = rs.get(0);
        assertEquals("AllocFreeDataMem.allocator", a.benchmark());
        assertEquals(Map.of("byteSize", "64", "handler", "pool(aligned64)"), a.params());
        assertEquals("pool(aligned64)", a.param("handler"));
        assertEquals(2, a.threads());
        assertEquals("avgt", a.mode());
        assertEquals(12.5, a.score());
        assertEquals(0.75, a.error());
        assertEquals("ns/op", a.unit());
        assertEquals("JDK 25.0.3, OpenJDK 64-Bit Server VM 25.0.3+9-LTS", a.jdk());
        assertEquals(1, a.forks());
        assertEquals(12.5, a.percentile(50));
        assertEquals(13.0, a.percentile(100));
        assertTrue(Double.isNaN(a.percentile(25)), "a percentile not written is NaN");
        Result b = rs.get(1);
        assertEquals("CurrentHandler.current", b.benchmark());
        assertEquals(Map.of(), b.params());
        assertTrue(Double.isNaN(b.error()), "JMH writes NaN as a string");
        assertEquals(0, b.forks(), "forks not written");
        assertEquals(Map.of(), b.percentiles());
    }

    @Test
    void marksTheRunsPinnedFromTheSecondCpu() {
        String second = JMH_JSON.replace("\"jvmArgs\" : [ \"--enable-native-access=ALL-UNNAMED\" ]",
                "\"jvmArgs\" : [ \"--enable-native-access=ALL-UNNAMED\", \"-Ddatamem.bench.firstCpu=1\" ]");
        Result a = Result.parseAll(second).getFirst();
        assertEquals("1", a.param(Result.FIRST_CPU));
        assertEquals(Map.of("byteSize", "64", "handler", "pool(aligned64)", Result.FIRST_CPU, "1"), a.params());
        String first = JMH_JSON.replace("\"jvmArgs\" : [ \"--enable-native-access=ALL-UNNAMED\" ]",
                "\"jvmArgs\" : [ \"-Ddatamem.bench.firstCpu=0\" ]");
        assertEquals(null, Result.parseAll(first).getFirst().param(Result.FIRST_CPU), "CPU 0 is the default");
        assertEquals(null, Result.parseAll(JMH_JSON).getFirst().param(Result.FIRST_CPU));
    }

    @Test
    void refusesWhatIsNotAResultFile() {
        assertThrows(IllegalArgumentException.class, () -> Result.parseAll("{}"));
        assertThrows(IllegalArgumentException.class, () -> Result.parseAll("[1]"));
        assertThrows(IllegalArgumentException.class, () -> Result.parseAll("[{\"mode\": \"avgt\"}]"));
        assertThrows(IllegalArgumentException.class,
                () -> Result.parseAll("[{\"benchmark\": \"a.B.c\", \"threads\": 1}]"));
    }
}
