package io.datamem.impl.os;

import io.datamem.internal.Libc;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The page-level downcalls return {@code -errno} on failure, with the errno the kernel set. */
class LinuxMemoryTest {

    private static final long PAGE = Libc.pageSize();

    @BeforeEach
    void linux() {
        Assumptions.assumeTrue(LinuxMemory.supported(), "skipped: these calls exist on Linux only");
    }

    @Test
    void failuresCarryTheKernelsErrno() {
        assertEquals(-LinuxMemory.EINVAL, LinuxMemory.munmap(1, PAGE), "unaligned address");
        assertEquals(-LinuxMemory.EINVAL, LinuxMemory.mmap(0, 0, LinuxMemory.PROT_READ_WRITE,
                LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS), "zero length");
        assertEquals(-LinuxMemory.ENOMEM, LinuxMemory.mmap(0, 1L << 56, LinuxMemory.PROT_READ_WRITE,
                LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS), "more than the address space");
        long a = LinuxMemory.mmap(0, 4 * PAGE, LinuxMemory.PROT_READ_WRITE,
                LinuxMemory.MAP_PRIVATE | LinuxMemory.MAP_ANONYMOUS);
        assertTrue(a > 0);
        assertEquals(-LinuxMemory.EINVAL, LinuxMemory.madvise(a, PAGE, 9999), "unknown advice");
        assertEquals(0, LinuxMemory.madvise(a, PAGE, LinuxMemory.MADV_DONTNEED));
        int[] status = new int[4];
        assertEquals(0, LinuxMemory.pageNodes(a, 4 * PAGE, PAGE, status));
        assertEquals(-LinuxMemory.ENOENT, status[1], "an untouched page has no node");
        MemorySegment.ofAddress(a).reinterpret(PAGE).set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        assertEquals(0, LinuxMemory.pageNodes(a, 4 * PAGE, PAGE, status));
        assertTrue(status[0] >= 0, "a touched page is on a node");
        long b = LinuxMemory.mremap(a, 4 * PAGE, 2 * PAGE, 0, 0);
        assertEquals(a, b, "shrinking stays in place");
        assertEquals(0, LinuxMemory.munmap(a, 2 * PAGE));
        assertTrue(LinuxMemory.currentCpu() >= 0);
    }

    @Test
    void errnoValuesHaveNames() {
        assertEquals("ENOMEM", LinuxMemory.errnoName(12));
        assertEquals("EINVAL", LinuxMemory.errnoName(-22));
        assertEquals("EXDEV", LinuxMemory.errnoName(LinuxMemory.EXDEV));
        assertEquals("errno 4242", LinuxMemory.errnoName(4242));
        assertEquals("Cannot allocate memory", LinuxMemory.errnoDescription(LinuxMemory.ENOMEM));
        assertEquals("No such file or directory", LinuxMemory.errnoDescription(-LinuxMemory.ENOENT));
        assertEquals("Unknown error 4242", LinuxMemory.errnoDescription(4242));
    }

    @Test
    void everyErrnoTextIsTheCLibrarysStrerror() throws Throwable {
        java.lang.invoke.MethodHandle strerror = java.lang.foreign.Linker.nativeLinker().downcallHandle(
                java.lang.foreign.Linker.nativeLinker().defaultLookup().find("strerror").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.ADDRESS,
                        java.lang.foreign.ValueLayout.JAVA_INT));
        int named = 0;
        for (int e = 1; e < 134; e++) {
            if (LinuxMemory.errnoName(e).startsWith("errno ")) {
                continue;
            }
            named++;
            String text = ((java.lang.foreign.MemorySegment) strerror.invokeExact(e)).reinterpret(256).getString(0);
            assertEquals(text, LinuxMemory.errnoDescription(e), LinuxMemory.errnoName(e));
        }
        assertTrue(named >= 26, named + " named errno values");
    }
}
