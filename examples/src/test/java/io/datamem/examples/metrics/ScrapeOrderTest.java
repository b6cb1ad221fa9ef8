package io.datamem.examples.metrics;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Bucket series in numeric order, everything else as the registry wrote it. */
class ScrapeOrderTest {

    @Test
    void bucketsOfEachHandlerGoInNumericOrderAndTheRestStays() {
        String scrape = """
                # HELP a_total A count
                # TYPE a_total counter
                a_total{handler="x"} 3.0
                a_total{handler="b"} 1.0
                # HELP s_total Sizes
                # TYPE s_total counter
                s_total{handler="y",le="+Inf",kind="host"} 9.0
                s_total{handler="y",le="1023",kind="host"} 5.0
                s_total{handler="x",le="63",kind="host"} 0.0
                s_total{handler="y",le="63",kind="host"} 1.0
                s_total{handler="x",le="+Inf",kind="host"} 2.0
                s_total{handler="y",le="262143",kind="host"} 7.0
                # EOF
                """;
        assertEquals("""
                # HELP a_total A count
                # TYPE a_total counter
                a_total{handler="x"} 3.0
                a_total{handler="b"} 1.0
                # HELP s_total Sizes
                # TYPE s_total counter
                s_total{handler="x",le="63",kind="host"} 0.0
                s_total{handler="x",le="+Inf",kind="host"} 2.0
                s_total{handler="y",le="63",kind="host"} 1.0
                s_total{handler="y",le="1023",kind="host"} 5.0
                s_total{handler="y",le="262143",kind="host"} 7.0
                s_total{handler="y",le="+Inf",kind="host"} 9.0
                # EOF
                """, ScrapeOrder.bucketsInNumericOrder(scrape));
    }
}
