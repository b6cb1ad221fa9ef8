package io.datamem.examples.cli;

import com.sun.net.httpserver.HttpServer;
import io.datamem.DataMem;
import io.datamem.examples.metrics.PrometheusExample;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/**
 * {@code datamem metrics}: runs a workload under a handler with statistics and prints its meters
 * in Prometheus's text format, or serves them over HTTP while the workload repeats.
 */
@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = "Runs a workload under a handler with +stats and prints its Micrometer meters as Prometheus"
                + " scrape text, or serves them at http://127.0.0.1:PORT/metrics (--serve).")
public final class MetricsCommand implements Callable<Integer> {

    @Option(names = "--handler", paramLabel = "NAME", defaultValue = "aligned64+stats",
            description = "The handler, by name; it needs +stats (default: ${DEFAULT-VALUE}).")
    String handler;

    @Spec
    CommandSpec spec;

    Integer port;

    int seconds;

    /** Creates the command (picocli instantiates it). */
    public MetricsCommand() {
    }

    /**
     * Sets the port to serve on ({@code --serve}).
     *
     * @param port a TCP port, 0 for any free one
     * @throws picocli.CommandLine.ParameterException if {@code port} is not in [0, 65535] (a usage error)
     */
    @Option(names = "--serve", paramLabel = "PORT", description = "Serve /metrics on this port of 127.0.0.1 (0: any).")
    void port(int port) {
        if (port < 0 || port > 65535) {
            throw UsageErrors.invalid(spec, "--serve", port, "a TCP port in [0, 65535], 0 for any");
        }
        this.port = port;
    }

    /**
     * Sets how long to serve ({@code --seconds}).
     *
     * @param seconds the number of seconds, at least 0
     * @throws picocli.CommandLine.ParameterException if {@code seconds} is negative (a usage error)
     */
    @Option(names = "--seconds", paramLabel = "SECONDS", defaultValue = "30",
            description = "How long to serve, repeating the workload (default: ${DEFAULT-VALUE}).")
    void seconds(int seconds) {
        if (seconds < 0) {
            throw UsageErrors.invalid(spec, "--seconds", seconds, ">= 0");
        }
        this.seconds = seconds;
    }

    /**
     * Runs the workload, then prints the scrape text or serves it.
     *
     * @return {@value DatamemCli#OK}
     * @throws picocli.CommandLine.ParameterException if {@code --handler} is not a handler name or names
     *                                                 one without {@code +stats} (a usage error)
     * @throws IllegalStateException                   if the handler is unavailable here
     * @throws io.datamem.AllocationException          if an allocation of the workload fails
     * @throws java.io.UncheckedIOException            if the port cannot be bound
     * @throws InterruptedException                    if interrupted while serving
     */
    @Override
    public Integer call() throws InterruptedException {
        try (PrometheusExample example = UsageErrors.named(spec, "--handler", handler,
                name -> new PrometheusExample(DataMem.handler(name)))) {
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
