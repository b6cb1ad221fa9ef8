package io.datamem.sycl;

import io.datamem.sycl.internal.SignalHandlers;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JVM keeps its signal handlers through the loading of an OpenCL runtime. */
class SignalHandlersTest {

    private static final int SIGBUS = 7;
    private static final int SIGSEGV = 11;
    private static final int SIGQUIT = 3;
    private static final int SIGTERM = 15;
    private static final int SIGWINCH = 28;
    private static final long SIG_IGN = 1;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SIGACTION = LINKER.downcallHandle(LINKER.defaultLookup().find("sigaction")
            .orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle DLADDR = LINKER.downcallHandle(LINKER.defaultLookup().find("dladdr")
            .orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    private static void ignore(int signal) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment act = arena.allocate(152, 8);
            act.set(JAVA_LONG, 0, SIG_IGN);
            assertEquals(0, (int) SIGACTION.invokeExact(signal, act, MemorySegment.NULL));
        }
    }

    /** The file name of the library a handler's code lies in. */
    private static String libraryOf(long handler) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = arena.allocate(32, 8);
            int found = (int) DLADDR.invokeExact(MemorySegment.ofAddress(handler), info);
            return found == 0 ? "unknown (0x" + Long.toHexString(handler) + ")"
                    : info.get(ADDRESS, 0).reinterpret(4096).getString(0);
        }
    }

    @Test
    void aHandlerTheActionReplacesIsPutBack() throws Throwable {
        long before = SignalHandlers.handlerOf(SIGWINCH);
        assertNotEquals(SIG_IGN, before, "SIGWINCH starts ignored; pick another signal for this test");
        String result = SignalHandlers.preserving(() -> {
            try {
                ignore(SIGWINCH);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            assertEquals(SIG_IGN, SignalHandlers.handlerOf(SIGWINCH));
            return "ran";
        });
        assertEquals("ran", result);
        assertEquals(before, SignalHandlers.handlerOf(SIGWINCH));
        assertEquals(List.of(SIGWINCH), SignalHandlers.lastRestored());
        assertEquals("nothing", SignalHandlers.preserving(() -> "nothing"));
        assertEquals(List.of(), SignalHandlers.lastRestored());
    }

    @Test
    void theJvmsHandlersSurviveTheOpenClRuntime() throws Throwable {
        SyclTests.assumeRuntime(UsmKind.SHARED);
        ClRuntime.get();
        SyclTests.queue(UsmKind.SHARED).finish();
        for (int signal : new int[] {SIGSEGV, SIGBUS, SIGQUIT, SIGTERM}) {
            String library = libraryOf(SignalHandlers.handlerOf(signal));
            assertTrue(library.endsWith("libjvm.so") || library.endsWith("libjsig.so"),
                    "signal " + signal + " is handled in " + library + " (expected: the JVM's handler)");
        }
    }
}
