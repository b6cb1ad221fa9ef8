package io.datamem.examples.cli;

import com.sun.net.httpserver.HttpServer;
import io.datamem.DataMem;
import io.datamem.examples.metrics.PrometheusExample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code datamem metrics}: runs a workload under a handler with statistics and prints its meters
 * in Prometheus's text format, or serves them over HTTP while the workload repeats.
 */
@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = "Runs a workload under a handler with +stats and prints its Micrometer meters as Prometheus"
                + " scrape text, or serves them at http://127.0.0.1:PORT/metrics (--serve).")
public final class MetricsCommand implements Callable<Integer> {

    @Option(names = "--handler", defaultValue = "aligned64+stats",
            description = "The handler, by name; it needs +stats (default: ${DEFAULT-VALUE}).")
    String handler;

    @Option(names = "--serve", paramLabel = "PORT", description = "Serve /metrics on this port of 127.0.0.1 (0: any).")
    Integer port;

    @Option(names = "--seconds", defaultValue = "30",
            description = "How long to serve, repeating the workload (default: ${DEFAULT-VALUE}).")
    int seconds;

    /** Creates the command (picocli instantiates it). */
    public MetricsCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        try (PrometheusExample example = new PrometheusExample(DataMem.handler(handler))) {
            example.workload(200, 42);
            if (port == null) {
                System.out.print(example.scrape());
                return 0;
            }
            HttpServer server = example.serve(port);
            System.out.println("serving http://127.0.0.1:" + server.getAddress().getPort() + "/metrics for "
                    + seconds + " s");
            System.out.flush();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long seed = 43;
            try {
                while (System.nanoTime() < end) {
                    example.workload(50, seed++);
                    Thread.sleep(200);
                }
            } finally {
                server.stop(0);
            }
            return 0;
        }
    }
}
