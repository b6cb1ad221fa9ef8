package io.datamem.examples.cli;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.examples.cli.CommandLineConventionsTest.Run;
import io.datamem.impl.snapshot.LayerSnapshot;
import io.datamem.impl.snapshot.LiveBlock;
import io.datamem.impl.snapshot.MemorySnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code datamem snapshot --pid}: a child JVM allocates through {@code pool(aligned64)+tracking}
 * and holds blocks; the command attaches to it, takes the snapshot through its MBean, and
 * {@code datamem view} renders it. Then the ways it fails: a dead pid, a process that is not a JVM,
 * a JVM whose MBean is turned off, an unknown handler, and wrong command lines.
 */
class LiveSnapshotTest {

    private static final String HANDLER = "pool(aligned64)+tracking";
    private static final long[] HELD_SIZES = {100, 200, 3000, 5000, 20_000_000};

    @TempDir
    Path dir;

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void stopChildren() throws InterruptedException {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static Run cli(String... args) {
        return CommandLineConventionsTest.cli(args);   // the same capture as the conventions test
    }

    /** A child JVM running {@link Child}, and what it said when ready. */
    private record ChildJvm(Process process, PrintWriter in, BufferedReader out, long pid, long[] addresses,
                            long bytes) {

        String await(String prefix) throws IOException {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith(prefix)) {
                    return line;
                }
            }
            throw new AssertionError("the child JVM ended before printing " + prefix);
        }

        void send(String command) {
            in.println(command);
            in.flush();
        }
    }

    private ChildJvm child(String... jvmOptions) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(List.of(jvmOptions));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Child.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        started.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter in = new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8);
        ChildJvm c = new ChildJvm(p, in, out, p.pid(), null, 0);
        String[] ready = c.await("READY ").split(" ");   // READY BYTES ADDRESS...
        long[] addresses = Arrays.stream(ready).skip(2).mapToLong(Long::parseLong).toArray();
        return new ChildJvm(p, in, out, p.pid(), addresses, Long.parseLong(ready[1]));
    }

    @Test
    void aSnapshotOfARunningJvmListsTheBlocksItHoldsAndTheViewRendersIt() throws Exception {
        ChildJvm c = child();
        Path file = dir.resolve("live.json");
        Run r = cli("snapshot", "--pid", Long.toString(c.pid()), "--handler", HANDLER, "--out", file.toString());
        assertEquals(DatamemCli.OK, r.status(), r.out() + r.err());
        assertTrue(r.out().startsWith("datamem snapshot: process " + c.pid() + ", 1 handler(s) described"), r.out());
        assertTrue(r.out().contains("handler '" + HANDLER + "': " + c.bytes() + " bytes live in " + HELD_SIZES.length
                + " tracked blocks"), r.out());
        assertTrue(r.out().contains("snapshot written to " + file), r.out());

        MemorySnapshot s = MemorySnapshot.read(file);
        assertEquals(c.pid(), s.processId(), "taken in the child, not here");
        assertEquals(1, s.handlers().size());
        MemorySnapshot.Handler h = s.handlers().getFirst();
        assertEquals(HANDLER, h.name());
        assertEquals(Arrays.stream(c.addresses()).boxed().toList(), h.blocks().stream().map(LiveBlock::address).toList(),
                "the blocks the child holds, oldest first");
        assertEquals(Arrays.stream(HELD_SIZES).boxed().toList(), h.blocks().stream().map(LiveBlock::byteSize).toList());
        assertEquals(c.bytes(), h.liveBytes().orElseThrow());
        LayerSnapshot.Pool pool = h.layers(LayerSnapshot.Pool.class).getFirst();
        assertEquals(HELD_SIZES.length - 1, pool.classes().stream().mapToLong(LayerSnapshot.SizeClass::usedBlocks).sum(),
                "four blocks in size classes: " + pool);
        assertEquals(1, pool.largeBlocks().size(), "the 20000000-byte block, above the pool's 16 MiB, is large: " + pool);
        assertEquals(c.addresses()[4], pool.largeBlocks().getFirst().address());
        assertTrue(pool.runByteSize() > 0 && pool.usedByteSize() >= 100 + 200 + 3000 + 5000, pool.toString());

        Path page = dir.resolve("live.html");
        Run v = cli("view", file.toString(), "--out", page.toString());
        assertEquals(DatamemCli.OK, v.status(), v.out() + v.err());
        String html = Files.readString(page);
        assertTrue(html.contains("<h2>Handler <code>" + HANDLER + "</code>"), html);
        assertTrue(html.contains("<h3>Pool "), "the pool's section");
        for (long a : c.addresses()) {
            assertTrue(html.contains(Long.toHexString(a)), "block 0x" + Long.toHexString(a) + " in the page");
        }
    }

    @Test
    void withoutAHandlerEveryHandlerGoesInOneFile() throws Exception {
        ChildJvm c = child();
        Path file = dir.resolve("all.json");
        Run r = cli("snapshot", "--pid", Long.toString(c.pid()), "--out", file.toString());
        assertEquals(DatamemCli.OK, r.status(), r.out() + r.err());
        MemorySnapshot s = MemorySnapshot.read(file);
        List<String> names = s.handlers().stream().map(MemorySnapshot.Handler::name).toList();
        assertEquals(List.of(HANDLER, "aligned64+stats", "default_allocator"), names,
                "the child's two handlers in the order built, then its process default");
        assertTrue(r.out().contains("3 handler(s) described (of 3 name(s): " + String.join(", ", names) + ")"),
                r.out());
        assertEquals(c.bytes(), s.handlers().getFirst().liveBytes().orElseThrow());
        assertEquals(4096, s.handlers().get(1).liveBytes().orElseThrow(), "the stats handler's one block");
    }

    @Test
    void snapshotsTakenWhileTheJvmAllocatesAreSelfConsistent() throws Exception {
        ChildJvm c = child();
        c.send("churn");
        c.await("CHURNING");
        for (int i = 0; i < 5; i++) {
            Path file = dir.resolve("churn-" + i + ".json");
            Run r = cli("snapshot", "--pid", Long.toString(c.pid()), "--handler", HANDLER, "--out", file.toString());
            assertEquals(DatamemCli.OK, r.status(), r.out() + r.err());
            MemorySnapshot s = MemorySnapshot.read(file);   // parses: the records check their sums
            MemorySnapshot.Handler h = s.handlers().getFirst();
            List<LiveBlock> blocks = h.blocks();
            assertEquals(blocks.stream().mapToLong(LiveBlock::byteSize).sum(), h.liveBytes().orElseThrow());
            Set<Long> addresses = new HashSet<>();
            List<LiveBlock> byAddress = blocks.stream().sorted(Comparator.comparingLong(LiveBlock::address)).toList();
            for (int k = 0; k < byAddress.size(); k++) {
                assertTrue(addresses.add(byAddress.get(k).address()), "listed twice: " + byAddress.get(k));
                if (k > 0) {
                    LiveBlock prev = byAddress.get(k - 1);
                    assertTrue(prev.address() + prev.byteSize() <= byAddress.get(k).address(),
                            "overlap: " + prev + " and " + byAddress.get(k));
                }
            }
            for (long held : c.addresses()) {
                assertTrue(addresses.contains(held), "a block held throughout is missing: 0x" + Long.toHexString(held));
            }
            for (LayerSnapshot.SizeClass k : h.layers(LayerSnapshot.Pool.class).getFirst().classes()) {
                assertEquals((long) k.slabs() * k.blocksPerSlab(), k.usedBlocks() + k.freeBlocks(), k.toString());
            }
        }
        c.send("stop");
        String stopped = c.await("STOPPED ");
        assertTrue(Long.parseLong(stopped.split(" ")[1]) > 0, "the child allocated while the snapshots ran: " + stopped);
    }

    @Test
    void anUnknownHandlerIsAUsageErrorListingTheJvmsHandlers() throws Exception {
        ChildJvm c = child();
        Run r = cli("snapshot", "--pid", Long.toString(c.pid()), "--handler", "pool(aligned4096)+tracking");
        assertEquals(DatamemCli.USAGE, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("Invalid value for option '--handler': 'pool(aligned4096)+tracking' (expected: a"
                + " handler of process " + c.pid() + ", one of " + HANDLER + ", aligned64+stats, default_allocator)"),
                r.err());
    }

    @Test
    void aJvmWithTheMBeanTurnedOffSaysSo() throws Exception {
        ChildJvm c = child("-Ddatamem.jmx=false");
        Run r = cli("snapshot", "--pid", Long.toString(c.pid()));
        assertEquals(DatamemCli.FAILURE, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("has no datamem MBean io.datamem:type=MemorySnapshots")
                && r.err().contains("-Ddatamem.jmx=false"), r.err());
        assertTrue(c.process().isAlive(), "the child goes on");
    }

    @Test
    void aDeadPidIsRefused() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(30, TimeUnit.SECONDS));
        Run r = cli("snapshot", "--pid", Long.toString(gone.pid()));
        assertEquals(DatamemCli.FAILURE, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("--pid " + gone.pid() + ": no such process (expected: the pid of a running JVM"),
                r.err());
    }

    @Test
    void aProcessThatIsNotAJvmIsRefusedAndLeftAlone() throws Exception {
        Process sleep = new ProcessBuilder("sleep", "60").start();
        started.add(sleep);
        Run r = cli("snapshot", "--pid", Long.toString(sleep.pid()));
        assertEquals(DatamemCli.FAILURE, r.status(), r.out() + r.err());
        assertTrue(r.err().contains("cannot attach to --pid " + sleep.pid()), r.err());
        assertTrue(r.err().contains("(expected: a JVM run by the same user, without -XX:+DisableAttachMechanism)"),
                r.err());
        Thread.sleep(200);
        assertTrue(sleep.isAlive(), "attaching must not kill a process that is not a JVM");
    }

    @Test
    void theCommandLineIsCheckedBeforeAnythingIsAttached() {
        Run both = cli("snapshot", "--pid", "1", "--log", "x.log");
        assertEquals(DatamemCli.USAGE, both.status());
        assertTrue(both.err().contains("--pid and --log are mutually exclusive"), both.err());
        Run neither = cli("snapshot");
        assertEquals(DatamemCli.USAGE, neither.status());
        assertTrue(neither.err().contains("Missing option: --pid PID or --log LOG"), neither.err());
        Run zero = cli("snapshot", "--pid", "0");
        assertEquals(DatamemCli.USAGE, zero.status());
        assertTrue(zero.err().contains("Invalid value for option '--pid': 0 (expected: a process id >= 1)"), zero.err());
        Run self = cli("snapshot", "--pid", Long.toString(ProcessHandle.current().pid()));
        assertEquals(DatamemCli.FAILURE, self.status());
        assertTrue(self.err().contains("that is this command's own process"), self.err());
    }

    /**
     * The child JVM: allocates through {@code pool(aligned64)+tracking} and holds
     * {@link #HELD_SIZES}, allocates one block through {@code aligned64+stats}, prints
     * {@code READY BYTES ADDRESS...}, then obeys lines on standard input: {@code churn} starts a
     * thread allocating and freeing through the pool (prints {@code CHURNING} once it has), {@code stop}
     * stops it (prints {@code STOPPED OPERATIONS}); it ends at the end of its input.
     */
    static final class Child {

        private Child() {
        }

        /**
         * Runs the child.
         *
         * @param args none
         * @throws Exception if reading its input fails
         */
        public static void main(String[] args) throws Exception {
            DataMemHandler h = DataMem.handler(HANDLER);
            DataMemAllocator a = h.allocator();
            StringBuilder ready = new StringBuilder("READY ").append(Arrays.stream(HELD_SIZES).sum());
            List<MemorySegment> held = new ArrayList<>();
            for (long size : HELD_SIZES) {
                MemorySegment s = a.malloc(size);
                held.add(s);
                ready.append(' ').append(s.address());
            }
            DataMemHandler stats = DataMem.handler("aligned64+stats");
            MemorySegment one = stats.allocator().malloc(4096);
            System.out.println(ready);
            AtomicBoolean stop = new AtomicBoolean();
            long[] operations = new long[1];
            Thread churn = null;
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.equals("churn") && churn == null) {
                    churn = Thread.ofPlatform().start(() -> churn(a, stop, operations));
                } else if (line.equals("stop") && churn != null) {
                    stop.set(true);
                    churn.join();
                    System.out.println("STOPPED " + operations[0]);
                }
            }
            stats.allocator().free(one, 4096);
            for (int i = 0; i < held.size(); i++) {
                a.free(held.get(i), HELD_SIZES[i]);
            }
        }

        private static void churn(DataMemAllocator a, AtomicBoolean stop, long[] operations) {
            SplittableRandom random = new SplittableRandom(18);
            List<MemorySegment> blocks = new ArrayList<>();
            List<Long> sizes = new ArrayList<>();
            boolean told = false;
            while (!stop.get()) {
                if (blocks.size() < 300 && (blocks.isEmpty() || random.nextInt(3) > 0)) {
                    long size = random.nextLong(1, 20_000);
                    MemorySegment s = a.malloc(size);
                    if (s.address() == 0) {
                        throw new AssertionError("malloc(" + size + ") failed");
                    }
                    blocks.add(s);
                    sizes.add(size);
                } else {
                    int k = random.nextInt(blocks.size());
                    a.free(blocks.remove(k), sizes.remove(k));
                }
                operations[0]++;
                if (!told && operations[0] == 1000) {
                    System.out.println("CHURNING");
                    told = true;
                }
            }
            for (int k = 0; k < blocks.size(); k++) {
                a.free(blocks.get(k), sizes.get(k));
            }
        }
    }
}
