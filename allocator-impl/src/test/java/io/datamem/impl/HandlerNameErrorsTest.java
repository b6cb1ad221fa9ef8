package io.datamem.impl;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.impl.adaptor.LoggingAdaptor;
import io.datamem.impl.internal.cpu.AlignedAllocator;
import io.datamem.impl.internal.placement.HugePageAllocatorImpl;
import io.datamem.impl.placement.HugePageAllocator;
import io.datamem.impl.placement.HugePages;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The errors a new user meets with the CPU backends on the path: refused names have no side
 * effect, files that cannot be opened and empty huge page pools are reported when the handler is
 * made, and messages stay short whatever the input.
 */
class HandlerNameErrorsTest {

    private static final long MiB = 1L << 20;

    @Test
    void aRefusedNameOpensAndTruncatesNothing(@TempDir Path dir) throws IOException {
        Path log = dir.resolve("x");
        Files.writeString(log, "keep me\n");
        FileTime before = FileTime.fromMillis(1_000_000_000_000L);
        Files.setLastModifiedTime(log, before);
        for (String tail : List.of("+bogus", "+limit=lots", "+stats=x", "+faults=often", "+aligned64",
                "+tracking=most", "+guard=maybe", "+jfr=on")) {
            String name = "aligned64+log=" + log + tail;
            assertThrows(IllegalArgumentException.class, () -> DataMem.handler(name), name);
            assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler("pool(" + name + ")"), name);
            assertThrows(IllegalArgumentException.class,
                    () -> AllocatorStack.on(AlignedAllocator.of(64)).with("log=" + log).with(tail.substring(1))
                            .build(), name);
            assertEquals("keep me\n", Files.readString(log), "the log file of " + name + " was not truncated");
            assertEquals(before, Files.getLastModifiedTime(log), name);
        }
        Path fresh = dir.resolve("never");
        assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+log=" + fresh + "+bogus"));
        assertTrue(Files.notExists(fresh), "a refused name created no file");
        DataMemHandler ok = DataMem.createHandler("aligned64+log=" + log);
        assertInstanceOf(LoggingAdaptor.class, ok.allocator()).close();
        assertTrue(Files.readString(log).startsWith("# datamem allocation log"), "a valid name opens its log");
    }

    @Test
    void aLogFileThatCannotBeOpenedIsAnIllegalStateNamingTheFileAndTheCause(@TempDir Path dir) throws IOException {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DataMem.handler("aligned64+log=/nonexistent/x"));
        assertEquals("handler 'aligned64+log=/nonexistent/x': cannot open the allocation log '/nonexistent/x' "
                + "(NoSuchFileException: '/nonexistent/x')", e.getMessage());
        Path directory = Files.createDirectory(dir.resolve("a-directory"));
        IllegalStateException d = assertThrows(IllegalStateException.class,
                () -> DataMem.createHandler("aligned64+stats+log=" + directory));
        assertTrue(d.getMessage().contains("cannot open the allocation log '" + directory + "' (FileSystemException")
                || d.getMessage().contains("cannot open the allocation log '" + directory + "' (AccessDeniedException"),
                d.getMessage());
        assertThrows(IllegalStateException.class,
                () -> AllocatorStack.on(AlignedAllocator.of(64)).with("log=/nonexistent/x").build());
    }

    @Test
    void explicitHugePagesWithNoneReservedFailWhenTheHandlerIsMade() {
        HugePages.Pool pool = HugePages.pool(2 * MiB).orElse(null);
        Assumptions.assumeTrue(pool != null && pool.total() == 0 && pool.available() == 0,
                () -> "skipped: needs a machine with no 2 MiB huge pages reserved; here: " + pool);
        for (String name : List.of("hugepages:2m", "hugepages:2m,threshold=0+stats", "pool(hugepages:2m)",
                "hugepages:2m(aligned64)")) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> DataMem.createHandler(name),
                    name);
            String m = e.getMessage();
            assertTrue(m.startsWith("handler '" + name + "': no 2 MiB huge pages are reserved on this machine (2 MiB: "
                    + "0 in the pool, 0 free"), m);
            assertTrue(m.contains("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), m);
            if (HugePages.defaultPageSize() == 2 * MiB) {
                assertTrue(m.contains("sysctl vm.nr_hugepages=N") && m.contains("/proc/sys/vm/nr_hugepages"), m);
            }
            assertTrue(m.contains("or allow a fallback: hugepages:2m,fallback=thp"), m);
        }
        IllegalStateException direct = assertThrows(IllegalStateException.class,
                () -> HugePageAllocatorImpl.builder().pages(HugePageAllocator.PageKind.HUGETLB_2M).build());
        assertTrue(direct.getMessage().startsWith("handler 'hugepages:2m': no 2 MiB huge pages are reserved"),
                direct.getMessage());
        // a fallback, or transparent pages, need no reservation
        assertEquals(List.of(HugePageAllocator.PageKind.HUGETLB_2M, HugePageAllocator.PageKind.NORMAL),
                ((HugePageAllocator) DataMem.createHandler("hugepages:2m,fallback=normal").allocator()).pageKinds());
        if (HugePages.transparentMode().usable()) {
            assertInstanceOf(HugePageAllocator.class, DataMem.createHandler("hugepages:thp").allocator());
        }
    }

    @Test
    void oneGibPagesWithNoneReservedSayWhereToReserveThem() {
        HugePages.Pool pool = HugePages.pool(1L << 30).orElse(null);
        Assumptions.assumeTrue(pool != null && pool.total() == 0 && pool.available() == 0,
                () -> "skipped: needs a machine offering 1 GiB huge pages with none reserved; here: " + pool);
        String m = assertThrows(IllegalStateException.class, () -> DataMem.handler("hugepages:1g")).getMessage();
        assertTrue(m.startsWith("handler 'hugepages:1g': no 1 GiB huge pages are reserved on this machine (1 GiB: 0 in "
                + "the pool, 0 free"), m);
        assertTrue(m.contains("echo N > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"), m);
        assertTrue(m.contains("hugepagesz=1G hugepages=N"), m);
    }

    @Test
    void aFamilyOfAnotherArtifactNamesIt() {
        assertEquals("handler 'cuda:pinned+stats': the family 'cuda' is provided by io.datamem:allocator-cuda, which "
                        + "is not on the class path or module path; add that artifact (docs/getting-started.md)",
                assertThrows(IllegalArgumentException.class, () -> DataMem.handler("cuda:pinned+stats")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DataMem.handler("pool(sycl:device)"))
                .getMessage().contains("the family 'sycl' is provided by io.datamem:allocator-sycl"));
    }

    @Test
    void longInputGivesAShortMessage() {
        String a = "1".repeat(1_000_000);
        for (String name : List.of("aligned64+limit=" + a, "aligned:" + a, "hugepages:threshold=" + a,
                "aligned64+log=/tmp/" + a, "pool(aligned64):max=" + a, "numa:bind=" + a)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataMem.handler(name));
            assertTrue(e.getMessage().length() < 400, () -> e.getMessage().length() + " characters");
            assertTrue(e.getMessage().contains("… (" + name.length() + " characters)")
                    || e.getMessage().contains("…' (" + name.length() + " characters)"), e.getMessage());
        }
        String opt = "x".repeat(100);
        String m = assertThrows(IllegalArgumentException.class, () -> DataMem.handler("aligned64+limit=" + opt))
                .getMessage();
        assertTrue(m.length() < 400, m);
    }
}
