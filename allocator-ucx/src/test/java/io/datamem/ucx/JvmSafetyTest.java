package io.datamem.ucx;

import io.datamem.testing.NativeToolchain;
import io.datamem.ucx.internal.Ucp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UCX leaves the JVM's signal handlers and memory alone: a fresh JVM reads the handlers of
 * SIGSEGV, SIGBUS, SIGILL and SIGFPE ({@code sigaction}: handler and flags) before UCX loads and
 * after a context has registered memory and moved bytes, and takes implicit null checks (SIGSEGV
 * inside the JVM) afterwards. Run in a child JVM, so that no earlier test has loaded UCX.
 */
class JvmSafetyTest {

    private static final int[] SIGNALS = {4, 7, 8, 11};   // SIGILL, SIGBUS, SIGFPE, SIGSEGV
    private static final long SIGACTION_SIZE = 152;        // glibc, x86-64 and AArch64
    private static final long SA_FLAGS_OFFSET = 136;

    @Test
    void signalHandlersAndEnvironmentAreTheJvms() {
        UcxTests.assumeUcx();
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                JvmSafetyTest.class.getName()));
        NativeToolchain.Result r = NativeToolchain.run(cmd, null);
        assertEquals(0, r.exitCode(), r.output());
        String before = line(r.output(), "before ");
        String after = line(r.output(), "after ");
        assertTrue(before.contains("11="), r.output());
        assertEquals(before, after, "signal handlers changed by UCX:\n" + r.output());
        assertTrue(r.output().contains("null checks 100000"), r.output());
        for (Map.Entry<String, String> e : Ucp.JVM_SAFE_ENVIRONMENT.entrySet()) {
            assertTrue(r.output().contains("env " + e.getKey() + "=[" + e.getValue() + "]"), r.output());
        }
    }

    private static String line(String output, String prefix) {
        return output.lines().filter(l -> l.startsWith(prefix)).findFirst().map(l -> l.substring(prefix.length()))
                .orElseThrow(() -> new AssertionError("no '" + prefix + "' line in:\n" + output));
    }

    /**
     * The child: prints the handlers, uses UCX, prints them again.
     *
     * @param args none
     * @throws Throwable on failure
     */
    public static void main(String[] args) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle sigaction = linker.downcallHandle(linker.defaultLookup().find("sigaction").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        MethodHandle getenv = linker.downcallHandle(linker.defaultLookup().find("getenv").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, ADDRESS));
        System.out.println("before " + handlers(sigaction));
        try (UcxContext c = UcxContext.open(UcxContext.Options.defaults().withTransports("tcp"));
             UcxContext d = UcxContext.open(UcxContext.Options.defaults().withTransports("tcp"));
             Arena arena = Arena.ofShared()) {
            UcxEndpoint ep = c.connect(d.workerAddress(), "d");
            MemorySegment target = arena.allocate(1 << 20);
            UcxRegistration reg = d.register(target);
            ep.put(arena.allocate(1 << 20).fill((byte) 1), reg.remoteRegion(), 0);
            reg.close();
        }
        System.out.println("after " + handlers(sigaction));
        int caught = 0;
        Object[] holder = new Object[1];
        for (int i = 0; i < 100_000; i++) {
            try {
                caught += holder[0].hashCode();
            } catch (NullPointerException e) {
                caught++;
            }
        }
        System.out.println("null checks " + caught);
        try (Arena arena = Arena.ofConfined()) {
            for (String name : Ucp.JVM_SAFE_ENVIRONMENT.keySet()) {
                MemorySegment v = (MemorySegment) getenv.invokeExact(arena.allocateFrom(name));
                System.out.println("env " + name + "=[" + (v.equals(MemorySegment.NULL) ? "<unset>"
                        : v.reinterpret(4096).getString(0)) + "]");
            }
        }
    }

    private static String handlers(MethodHandle sigaction) throws Throwable {
        StringBuilder s = new StringBuilder();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment old = arena.allocate(SIGACTION_SIZE, 8);
            for (int sig : SIGNALS) {
                int rc = (int) sigaction.invokeExact(sig, MemorySegment.NULL, old);
                if (rc != 0) {
                    throw new IllegalStateException("sigaction(" + sig + ") returned " + rc);
                }
                s.append(sig).append('=').append(Long.toHexString(old.get(JAVA_LONG, 0))).append("/flags=")
                        .append(Integer.toHexString(old.get(JAVA_INT, SA_FLAGS_OFFSET))).append(' ');
            }
        }
        return s.toString().strip();
    }
}
