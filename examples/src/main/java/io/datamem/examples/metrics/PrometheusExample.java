package io.datamem.examples.metrics;

import com.sun.net.httpserver.HttpServer;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.impl.micrometer.DataMemMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A handler's allocation metrics in Prometheus: a {@link PrometheusMeterRegistry} with a
 * {@link DataMemMetrics} bound to it, scraped as text or served over HTTP at {@code /metrics} for a
 * Prometheus server to collect.
 *
 * <pre>
 * ./datamem metrics                              # run a workload, print the scrape text
 * ./datamem metrics --serve 9464 --seconds 60    # serve http://127.0.0.1:9464/metrics meanwhile
 * </pre>
 *
 * or, without the launcher, {@code java --enable-native-access=ALL-UNNAMED -cp
 * "examples/target/datamem-examples.jar:examples/target/lib/*"
 * io.datamem.examples.metrics.PrometheusExample [HANDLER]}.
 */
public final class PrometheusExample implements AutoCloseable {

    private final DataMemHandler handler;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final DataMemMetrics metrics;

    /**
     * Publishes a handler's statistics to a new Prometheus registry.
     *
     * @param handler a handler with {@code +stats} in its stack
     * @throws IllegalArgumentException if the handler has no statistics
     */
    public PrometheusExample(DataMemHandler handler) {
        this.handler = handler;
        this.metrics = DataMemMetrics.builder(handler).percentileHistogram(true).build();
        metrics.bindTo(registry);
    }

    /**
     * Runs the example: a workload under the handler named by the first argument (default
     * {@code aligned64+stats}), then prints the Prometheus scrape text.
     *
     * @param args an optional handler name
     */
    public static void main(String[] args) {
        String name = args.length > 0 ? args[0] : "aligned64+stats";
        try (PrometheusExample example = new PrometheusExample(DataMem.handler(name))) {
            example.workload(200, 42);
            System.out.print(example.scrape());
        }
    }

    /**
     * A workload of arrays of varied sizes, resized and closed, under the handler; everything it
     * allocates is freed before it returns.
     *
     * @param arrays how many arrays to create
     * @param seed   the seed of the sizes
     */
    public void workload(int arrays, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        DataMem.runWith(handler, () -> {
            List<NDArray> live = new ArrayList<>();
            for (int i = 0; i < arrays; i++) {
                NDArray a = r.nextBoolean() ? NDArray.zeros(DType.FLOAT64, r.nextInt(1, 100_000))
                        : NDArray.empty(DType.INT32, r.nextInt(1, 10_000));
                if (r.nextInt(4) == 0) {
                    a.resize(a.size() * 2);
                }
                live.add(a);
                if (live.size() > 8) {
                    live.remove(r.nextInt(live.size())).close();
                }
            }
            live.forEach(NDArray::close);
        });
    }

    /**
     * The current metrics in Prometheus's text format, the size buckets of each handler in numeric
     * order.
     *
     * @return the scrape text
     */
    public String scrape() {
        return ScrapeOrder.bucketsInNumericOrder(registry.scrape());
    }

    /**
     * Serves {@code /metrics} over HTTP on the loopback interface, until the returned server is
     * stopped.
     *
     * @param port the port, or 0 for any free one
     * @return the started server; its address says the port
     * @throws UncheckedIOException if the port cannot be bound
     */
    public HttpServer serve(int port) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on port " + port + ": " + e.getMessage(), e);
        }
        server.createContext("/metrics", exchange -> {
            byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return server;
    }

    /**
     * Unbinds the meters.
     */
    @Override
    public void close() {
        metrics.close();
        registry.close();
    }
}
