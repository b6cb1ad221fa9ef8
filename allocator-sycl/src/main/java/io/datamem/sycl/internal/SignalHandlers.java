package io.datamem.sycl.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Keeps the JVM's signal handlers through the loading of an OpenCL runtime. PoCL, the CPU runtime
 * the tests use, loads LLVM, whose initialisation installs its own handlers for SIGSEGV, SIGBUS,
 * SIGILL, SIGQUIT, SIGTERM, SIGUSR2 and more (crash reports and temporary-file clean-up), and PoCL
 * one for SIGFPE. The JVM needs its own: SIGSEGV is how compiled Java code takes implicit null
 * checks and safepoint polls, SIGQUIT prints thread dumps, SIGTERM runs shutdown hooks. With
 * LLVM's in place, a JVM signal first reaches LLVM, which unregisters itself and lets the signal
 * happen again: usually harmless, but under concurrent signals the process was seen to die of a
 * SIGSEGV with no {@code hs_err} file.
 *
 * <p>{@link #preserving} records the handler of every signal (the whole {@code struct sigaction})
 * before an action and puts back each one the action changed. LLVM's crash reports and PoCL's
 * handling of integer division by zero inside kernels are lost; a program that runs its own
 * kernels and wants them keeps them by preloading the JDK's {@code libjsig.so}
 * ({@code LD_PRELOAD=$JAVA_HOME/lib/libjsig.so}): the JVM then chains the runtime's handlers behind
 * its own, and the handlers of the JVM's signals no longer appear changed here (docs/sycl.md).
 *
 * <p>Linux only (the {@code struct sigaction} layout of glibc on x86-64 and AArch64); elsewhere
 * the action runs unguarded.
 */
public final class SignalHandlers {

    /** {@code sizeof(struct sigaction)} with glibc on x86-64 and AArch64. */
    private static final long SIGACTION_SIZE = 152;
    private static final int SIGKILL = 9;
    private static final int SIGSTOP = 19;
    private static final int LAST_STANDARD_SIGNAL = 31;

    private static final MethodHandle SIGACTION = bind();

    private static volatile List<Integer> lastRestored = List.of();

    private SignalHandlers() {
    }

    private static MethodHandle bind() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"))) {
            return null;
        }
        Linker linker = Linker.nativeLinker();
        return linker.defaultLookup().find("sigaction").map(s -> linker.downcallHandle(s,
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS))).orElse(null);
    }

    /**
     * Runs {@code action} and then restores the handler of every signal it replaced.
     *
     * @param action what may install signal handlers (loading an OpenCL runtime)
     * @param <T>    what it returns
     * @return what {@code action} returned
     * @throws IllegalStateException if a handler cannot be read or restored ({@code sigaction}
     *                               failed), after {@code action} ran
     */
    public static <T> T preserving(Supplier<T> action) {
        if (SIGACTION == null) {
            return action.get();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] saved = new MemorySegment[LAST_STANDARD_SIGNAL + 1];
            for (int sig = 1; sig <= LAST_STANDARD_SIGNAL; sig++) {
                if (sig != SIGKILL && sig != SIGSTOP) {
                    saved[sig] = arena.allocate(SIGACTION_SIZE, 8);
                    query(sig, saved[sig]);
                }
            }
            T result = action.get();
            MemorySegment now = arena.allocate(SIGACTION_SIZE, 8);
            List<Integer> restored = new ArrayList<>();
            for (int sig = 1; sig <= LAST_STANDARD_SIGNAL; sig++) {
                if (saved[sig] == null) {
                    continue;
                }
                query(sig, now);
                if (now.get(JAVA_LONG, 0) != saved[sig].get(JAVA_LONG, 0)) {   // sa_handler / sa_sigaction
                    call(sig, saved[sig], MemorySegment.NULL, "restore");
                    restored.add(sig);
                }
            }
            lastRestored = List.copyOf(restored);
            return result;
        }
    }

    /**
     * The signals whose handlers the last {@link #preserving} call restored, for diagnostics.
     *
     * @return signal numbers, ascending; empty if none was replaced or nothing ran
     */
    public static List<Integer> lastRestored() {
        return lastRestored;
    }

    /**
     * The address of the current handler of a signal ({@code sa_handler}): 0 for the default
     * action, 1 for ignore.
     *
     * @param signal a signal number from 1 to 31
     * @return the handler's address
     * @throws UnsupportedOperationException if this platform is not Linux on x86-64 or AArch64
     * @throws IllegalStateException         if {@code sigaction} fails
     */
    public static long handlerOf(int signal) {
        if (SIGACTION == null) {
            throw new UnsupportedOperationException("signal handlers are read on Linux (x86-64, AArch64) only");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SIGACTION_SIZE, 8);
            query(signal, s);
            return s.get(JAVA_LONG, 0);
        }
    }

    private static void query(int sig, MemorySegment into) {
        call(sig, MemorySegment.NULL, into, "read");
    }

    private static void call(int sig, MemorySegment act, MemorySegment old, String what) {
        int rc;
        try {
            rc = (int) SIGACTION.invokeExact(sig, act, old);
        } catch (Throwable t) {
            throw new IllegalStateException("sigaction(" + sig + ") failed", t);
        }
        if (rc != 0) {
            throw new IllegalStateException("sigaction(" + sig + ") could not " + what + " the handler of signal "
                    + sig + " (returned " + rc + ")");
        }
    }
}
