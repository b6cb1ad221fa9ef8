package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.nz;
import static io.datamem.benchmarks.report.Format.ratio;
import static io.datamem.benchmarks.report.Format.sizeName;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.UCX_CACHED_REGISTRATION_NS;
import static io.datamem.benchmarks.report.Report.UCX_PUT_VS_MEMCPY;
import static io.datamem.benchmarks.report.Report.UCX_PUT_VS_SOCKET;
import static io.datamem.benchmarks.report.Verdicts.ratioError;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * UCX over shared memory: the bandwidth of a put against memcpy and a socket copy, registrations,
 * and their goals.
 */
final class UcxSection extends Section {

    UcxSection(PageInput input) {
        super(input);
    }

    /**
     * A UCX stage's result at a size, over the shared-memory transports where the benchmark has a
     * transport, with its score and error in ns (the transfer benchmarks report µs).
     */
    private Optional<Result> ucxRow(String benchmark, long byteSize) {
        return ucxRow(benchmark, byteSize, "ucx");
    }

    /**
     * A UCX row over {@code sm}; for transfers, into the given target memory ({@code ucx}: a block
     * of the ucx allocator in shared memory, which the goals use; {@code registered}: registered
     * arena memory). A row without the {@code target} parameter (runs before it existed, whose target
     * was registered memory) matches either.
     */
    private Optional<Result> ucxRow(String benchmark, long byteSize, String target) {
        String size = Long.toString(byteSize);
        return find(r -> r.benchmark().equals(benchmark) && size.equals(r.param("byteSize"))
                && (r.param("transport") == null || "sm".equals(r.param("transport")))
                && (r.param("target") == null || target.equals(r.param("target")))).map(UcxSection::inNanoseconds);
    }

    /** The result with its score and error in ns per operation. */
    private static Result inNanoseconds(Result r) {
        double f = switch (r.unit()) {
            case "ns/op" -> 1;
            case "us/op" -> 1e3;
            case "ms/op" -> 1e6;
            case "s/op" -> 1e9;
            default -> throw new IllegalArgumentException(r.benchmark() + ": unit " + r.unit()
                    + " (expected: a time per operation)");
        };
        return f == 1 ? r : new Result(r.benchmark(), r.params(), r.threads(), r.mode(), r.score() * f,
                r.error() * f, "ns/op", r.jdk(), r.forks(), r.percentiles());
    }

    private List<Long> ucxSizes() {
        return results.stream().filter(r -> r.benchmark().equals("UcxTransferBenchmark.put"))
                .map(r -> Long.parseLong(r.param("byteSize"))).distinct().sorted().toList();
    }

    /** The UCX table: bandwidth of a put over shared memory, memcpy and a socket copy; registrations. */
    String ucx() {
        List<Long> sizes = ucxSizes();
        if (sizes.isEmpty()) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| bytes | UCX put, `sm`, into a `ucx` block (GB/s) | memcpy (GB/s) |"
                + " socket copy (GB/s) | put ÷ memcpy | put ÷ socket | UCX put, `sm`, into registered memory (GB/s)"
                + " | registered put ÷ socket |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (long size : sizes) {
            Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
            Optional<Result> registered = ucxRow("UcxTransferBenchmark.put", size, "registered");
            Optional<Result> memcpy = ucxRow("LoopbackBaselineBenchmark.memcpy", size);
            Optional<Result> socket = ucxRow("LoopbackBaselineBenchmark.socket", size);
            b.append("| ").append(sizeName(size)).append(" | ").append(bandwidth(put, size)).append(" | ")
                    .append(bandwidth(memcpy, size)).append(" | ").append(bandwidth(socket, size)).append(" | ")
                    .append(speed(put, memcpy)).append(" | ").append(speed(put, socket)).append(" | ")
                    .append(bandwidth(registered, size)).append(" | ").append(speed(registered, socket))
                    .append(" |\n");
        }
        b.append("\n| registration (`sm`) | ns |\n|---|---:|\n");
        for (long size : results.stream().filter(r -> r.benchmark().startsWith("UcxRegistrationBenchmark."))
                .map(r -> Long.parseLong(r.param("byteSize"))).distinct().sorted().toList()) {
            b.append("| ").append(sizeName(size)).append(", cached (a lookup) | ")
                    .append(cell(ucxRow("UcxRegistrationBenchmark.cached", size))).append(" |\n");
            b.append("| ").append(sizeName(size)).append(", uncached (`ucp_mem_map` + `ucp_mem_unmap`) | ")
                    .append(cell(ucxRow("UcxRegistrationBenchmark.uncached", size))).append(" |\n");
        }
        return b.toString();
    }

    private static String bandwidth(Optional<Result> r, long bytes) {
        return r.map(x -> fmt(bytes / x.score()) + " ± " + fmt(bytes / x.score() * nz(x.error()) / x.score()))
                .orElse("n/a");
    }

    /** How many times faster {@code fast} is than {@code slow} (time of slow ÷ time of fast). */
    private static String speed(Optional<Result> fast, Optional<Result> slow) {
        if (fast.isEmpty() || slow.isEmpty()) {
            return "n/a";
        }
        double f = fast.get().score();
        double s = slow.get().score();
        return ratio(s / f) + " ± " + fmt(ratioError(s, slow.get().error(), f, fast.get().error()));
    }

    /** Goal: a shared-memory put of 64 MiB at least {@link Report#UCX_PUT_VS_MEMCPY} of memcpy's bandwidth. */
    Goal ucxVsMemcpyGoal() {
        String goal = "UCX shared-memory put at 64 MiB ≥ " + fmt(100 * UCX_PUT_VS_MEMCPY) + "% of memcpy's bandwidth";
        long size = 64L << 20;
        Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
        Optional<Result> memcpy = ucxRow("LoopbackBaselineBenchmark.memcpy", size);
        if (put.isEmpty() || memcpy.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double share = memcpy.get().score() / put.get().score();
        double err = ratioError(memcpy.get().score(), memcpy.get().error(), put.get().score(), put.get().error());
        boolean met = share >= UCX_PUT_VS_MEMCPY;
        return new Goal(goal, fmt(100 * share) + "% ± " + fmt(100 * err) + "%", strictVerdict(List.of(new Check(met,
                !(Math.abs(share - UCX_PUT_VS_MEMCPY) >= err))), Math.min(put.get().forks(), memcpy.get().forks())),
                met ? "" : "into a block of the ucx allocator in shared memory a put is one copy by the sender;"
                + " below half of memcpy means the sender lost its core (the table, and docs/distributed.md).");
    }

    /** Goal: a put at least {@link Report#UCX_PUT_VS_SOCKET}× as fast as a socket copy at every size ≥ 64 KiB. */
    Goal ucxVsSocketGoal() {
        String goal = "UCX put ≥ " + fmt(UCX_PUT_VS_SOCKET) + "× a socket copy at every size ≥ 64 KiB";
        List<Check> checks = new ArrayList<>();
        StringBuilder figure = new StringBuilder();
        int forks = Integer.MAX_VALUE;
        for (long size : ucxSizes()) {
            Optional<Result> put = ucxRow("UcxTransferBenchmark.put", size);
            Optional<Result> socket = ucxRow("LoopbackBaselineBenchmark.socket", size);
            if (size < 65536 || put.isEmpty() || socket.isEmpty()) {
                continue;
            }
            double r = socket.get().score() / put.get().score();
            double err = ratioError(socket.get().score(), socket.get().error(), put.get().score(), put.get().error());
            checks.add(new Check(r >= UCX_PUT_VS_SOCKET, !(Math.abs(r - UCX_PUT_VS_SOCKET) >= err)));
            forks = Math.min(forks, Math.min(put.get().forks(), socket.get().forks()));
            figure.append(figure.isEmpty() ? "" : ", ").append(sizeName(size)).append(' ').append(ratio(r))
                    .append(" ± ").append(fmt(err));
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return new Goal(goal, figure.toString(), strictVerdict(checks, forks), met ? ""
                : "into a ucx block a put needs no target progress, so a miss is the sender's time: see the table"
                + " (registered memory over sm is emulated with active messages in UCX 1.13 and is slower still;"
                + " docs/distributed.md).");
    }

    /** Goal: a cached registration at most {@link Report#UCX_CACHED_REGISTRATION_NS}. */
    Goal ucxRegistrationGoal() {
        String goal = "a cached UCX registration ≤ " + fmt(UCX_CACHED_REGISTRATION_NS) + " ns";
        List<Result> cached = results.stream().filter(r -> r.benchmark().equals("UcxRegistrationBenchmark.cached"))
                .toList();
        if (cached.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        Result worst = cached.stream().max(java.util.Comparator.comparingDouble(Result::score)).orElseThrow();
        List<Check> checks = cached.stream().map(r -> new Check(r.score() <= UCX_CACHED_REGISTRATION_NS,
                !(Math.abs(r.score() - UCX_CACHED_REGISTRATION_NS) >= nz(r.error())))).toList();
        int forks = cached.stream().mapToInt(Result::forks).min().orElse(0);
        return new Goal(goal, "worst " + fmt(worst.score()) + " ± " + fmt(nz(worst.error())) + " ns (" +
                sizeName(Long.parseLong(worst.param("byteSize"))) + ")", strictVerdict(checks, forks), "");
    }
}
