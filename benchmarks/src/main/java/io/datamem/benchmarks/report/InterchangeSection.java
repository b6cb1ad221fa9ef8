package io.datamem.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.datamem.benchmarks.report.Format.cell;
import static io.datamem.benchmarks.report.Format.fmt;
import static io.datamem.benchmarks.report.Format.nz;
import static io.datamem.benchmarks.report.Goal.NOT_MEASURED;
import static io.datamem.benchmarks.report.Report.EXCHANGE_NS;
import static io.datamem.benchmarks.report.Report.IPC_OPEN_NS;
import static io.datamem.benchmarks.report.Report.UPCALL_PAIR_VS_JAVA;
import static io.datamem.benchmarks.report.Verdicts.strictVerdict;

/**
 * Handing memory to other runtimes: the exchanges table (DLPack, Arrow C Data, {@code Py_buffer}, a
 * pair through an exported NEP 49 handler) and the shared-memory IPC handle table, with their goals.
 */
final class InterchangeSection extends Section {

    private static final List<String[]> EXCHANGES = List.of(
            new String[] {"Exchanges.dlpackLegacy", "DLPack, legacy `DLManagedTensor`: export, import back, close (deleter)"},
            new String[] {"Exchanges.dlpackVersioned", "DLPack, `DLManagedTensorVersioned`: export, import back, close"},
            new String[] {"Exchanges.arrowCData", "Arrow C Data Interface (`ArrowSchema` + `ArrowArray`): export,"
                    + " import back, close (release callback)"},
            new String[] {"Exchanges.pyBuffer", "`Py_buffer` (`FULL_RO`): request and release"},
            new String[] {"Exchanges.nep49Pair", "64-byte pair through the exported `PyDataMem_Handler` (downcall to its"
                    + " `malloc` and `free`, each an upcall)"},
            new String[] {"Exchanges.emptyUpcall", "one crossing: a downcall to an upcall stub that does nothing"},
            new String[] {"Exchanges.javaPair", "64-byte pair on the handler directly"});

    private static final List<String[]> IPC = List.of(
            new String[] {"IpcOpen.handleOf", "the exporter's handle of a block (cached per mapping)"},
            new String[] {"IpcOpen.openCached", "open + close of a handle whose mapping is mapped here already"},
            new String[] {"IpcOpen.openCachedSegment", "the same, reading a byte through the lease's segment"},
            new String[] {"IpcOpen.openCold", "open + close with nothing cached (`pidfd_getfd`, checks, `mmap`,"
                    + " `munmap`)"},
            new String[] {"IpcOpen.allocateFree", "`shared` `malloc` + `free` of the block (memfd, seals, `mmap`)"});

    InterchangeSection(PageInput input) {
        super(input);
    }

    /** The exchanges table. */
    String exchanges() {
        if (EXCHANGES.stream().noneMatch(e -> named(e[0]).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| exchange (float64[8] of `default_allocator` memory) | ns per"
                + " operation |\n|---|---:|\n");
        for (String[] e : EXCHANGES) {
            b.append("| ").append(e[1]).append(" | ").append(cell(named(e[0]))).append(" |\n");
        }
        return b.toString();
    }

    /** Goal: every exchange at most {@link Report#EXCHANGE_NS}. */
    Goal exchangeGoal() {
        String goal = "each exchange (DLPack legacy and versioned round trip, Arrow C Data round trip, `Py_buffer`) ≤ " + fmt(EXCHANGE_NS) + " ns";
        List<Check> checks = new ArrayList<>();
        StringBuilder figure = new StringBuilder();
        int forks = Integer.MAX_VALUE;
        for (String[] e : EXCHANGES.subList(0, 4)) {
            Optional<Result> r = named(e[0]);
            if (r.isEmpty()) {
                continue;
            }
            double v = r.get().score();
            double err = r.get().error();
            checks.add(new Check(v <= EXCHANGE_NS, !(Math.abs(v - EXCHANGE_NS) >= err)));
            forks = Math.min(forks, r.get().forks());
            figure.append(figure.isEmpty() ? "" : ", ").append(e[0].substring(e[0].indexOf('.') + 1)).append(' ')
                    .append(fmt(v)).append(" ± ").append(fmt(err)).append(" ns");
        }
        if (checks.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        boolean met = checks.stream().allMatch(Check::pass);
        return new Goal(goal, figure.toString(), strictVerdict(checks, forks), met ? ""
                : "an exchange pins the array, writes the native struct (DLPack: tensor, shape and strides in a"
                + " block of the export table; Arrow: two structs with tokens in it) and, on the way back, adopts"
                + " the memory as an array with its own lifecycle, whose creation and close were about half of a"
                + " DLPack round trip's samples (docs/interchange.md, \"What an exchange costs\"): the figures"
                + " above say which part exceeds the target.");
    }

    /** Goal: the NEP 49 upcall pair at most {@link Report#UPCALL_PAIR_VS_JAVA}× the Java pair plus two crossings. */
    Goal upcallPairGoal() {
        String goal = "a pair through an exported NEP 49 handler ≤ " + fmt(UPCALL_PAIR_VS_JAVA)
                + "× the Java pair + its two crossings";
        Optional<Result> pair = named("Exchanges.nep49Pair");
        Optional<Result> java = named("Exchanges.javaPair");
        Optional<Result> crossing = named("Exchanges.emptyUpcall");
        if (pair.isEmpty() || java.isEmpty() || crossing.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double target = UPCALL_PAIR_VS_JAVA * java.get().score() + 2 * crossing.get().score();
        double targetError = Math.hypot(UPCALL_PAIR_VS_JAVA * nz(java.get().error()), 2 * nz(crossing.get().error()));
        double v = pair.get().score();
        double err = Math.hypot(nz(pair.get().error()), targetError);
        int forks = Math.min(pair.get().forks(), Math.min(java.get().forks(), crossing.get().forks()));
        List<Check> checks = List.of(new Check(v <= target, !(Math.abs(v - target) >= err)));
        return new Goal(goal, fmt(v) + " ± " + fmt(pair.get().error()) + " ns against " + fmt(target) + " ns ("
                + fmt(UPCALL_PAIR_VS_JAVA) + " × " + fmt(java.get().score()) + " + 2 × " + fmt(crossing.get().score())
                + ")", strictVerdict(checks, forks), v <= target ? "" : "the exported handler's upcalls record each"
                + " block in a live-block table (NumPy's `realloc` gives no old size; 16 stripes, one compare-and-set"
                + " lock each), which the Java pair does not.");
    }

    /** The IPC handle table. */
    String ipc() {
        if (IPC.stream().noneMatch(e -> named(e[0]).isPresent())) {
            return "_Not measured in this run._\n";
        }
        StringBuilder b = new StringBuilder("| operation (64 KiB block of `shared`) | ns per operation |\n|---|---:|\n");
        for (String[] e : IPC) {
            b.append("| ").append(e[1]).append(" | ").append(cell(named(e[0]))).append(" |\n");
        }
        return b.toString();
    }

    /** Goal: a cached IPC open at most {@link Report#IPC_OPEN_NS}. */
    Goal ipcOpenGoal() {
        String goal = "a cached IPC open ≤ " + fmt(IPC_OPEN_NS) + " ns";
        Optional<Result> r = named("IpcOpen.openCached");
        if (r.isEmpty()) {
            return new Goal(goal, NOT_MEASURED, NOT_MEASURED, "");
        }
        double v = r.get().score();
        double err = nz(r.get().error());
        boolean met = v <= IPC_OPEN_NS;
        return new Goal(goal, fmt(v) + " ± " + fmt(err) + " ns", strictVerdict(List.of(new Check(met,
                !(Math.abs(v - IPC_OPEN_NS) >= err))), r.get().forks()), met ? "" : "a cached open looks the"
                + " mapping up by its tag and counts a lease; more than that is the part to work on.");
    }
}
