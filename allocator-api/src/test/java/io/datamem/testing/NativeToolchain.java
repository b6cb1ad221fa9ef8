package io.datamem.testing;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Native tools for tests that compile C consumers at test time: gcc, Debian's python3 and its
 * headers, libdlpack-dev's {@code dlpack/dlpack.h}.
 *
 * <p>A missing tool skips the test with a message naming the Debian package to install, except
 * under {@code CI=true}, where it fails the test: CI installs them ({@code .ci/run}).
 */
public final class NativeToolchain {

    /** Debian's interpreter: the one whose headers python3-dev installs. */
    public static final Path PYTHON3 = Path.of("/usr/bin/python3");
    /** Debian's python3-config (the one on PATH may belong to another installation). */
    public static final Path PYTHON3_CONFIG = Path.of("/usr/bin/python3-config");
    /** libdlpack-dev's header. */
    public static final Path DLPACK_HEADER = Path.of("/usr/include/dlpack/dlpack.h");

    private NativeToolchain() {
    }

    /** Whether this run is CI ({@code CI=true}), where missing tools fail tests instead of skipping them. */
    public static boolean ci() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * Skips (locally) or fails (under CI) the calling test when a tool is missing.
     *
     * @param available whether the tool is there
     * @param what      what is missing
     * @param debianPackage the package that provides it
     */
    public static void require(boolean available, String what, String debianPackage) {
        if (available) {
            return;
        }
        String message = what + " is missing: install the Debian package " + debianPackage + " (apt-get install -y "
                + debianPackage + ")";
        if (ci()) {
            Assertions.fail(message + "; CI=true, so this is a failure, not a skip");
        }
        Assumptions.abort(message);
    }

    /** The C compiler, or skips/fails. */
    public static Path gcc() {
        Path gcc = onPath("gcc");
        require(gcc != null, "the C compiler gcc", "gcc");
        return gcc;
    }

    /** Debian's python3, or skips/fails. */
    public static Path python3() {
        require(Files.isExecutable(PYTHON3), PYTHON3 + " (Debian's Python)", "python3");
        return PYTHON3;
    }

    /** The {@code -I} flags for Python.h, or skips/fails. */
    public static List<String> pythonIncludes() {
        require(Files.isExecutable(PYTHON3_CONFIG), PYTHON3_CONFIG + " (Python.h and python3-config)", "python3-dev");
        Result r = run(List.of(PYTHON3_CONFIG.toString(), "--includes"), null);
        Assertions.assertEquals(0, r.exitCode(), "python3-config --includes: " + r.output());
        List<String> flags = new ArrayList<>(Arrays.asList(r.output().trim().split("\\s+")));
        boolean header = flags.stream().filter(f -> f.startsWith("-I"))
                .anyMatch(f -> Files.isRegularFile(Path.of(f.substring(2), "Python.h")));
        require(header, "Python.h", "python3-dev");
        return flags;
    }

    /** The linker flags for libpython, or skips/fails. */
    public static List<String> pythonLibraries() {
        pythonIncludes();
        Result r = run(List.of(PYTHON3_CONFIG.toString(), "--ldflags", "--embed"), null);
        Assertions.assertEquals(0, r.exitCode(), "python3-config --ldflags --embed: " + r.output());
        return new ArrayList<>(Arrays.asList(r.output().trim().split("\\s+")));
    }

    /** Checks that libdlpack-dev's header is installed, or skips/fails. */
    public static void requireDlpackHeader() {
        require(Files.isRegularFile(DLPACK_HEADER), DLPACK_HEADER.toString(), "libdlpack-dev");
    }

    /**
     * Compiles a C source from the test resources into a shared library.
     *
     * @param resource the resource name, for example {@code native/pybuffer_probe.c}
     * @param dir      where to put the source and the library
     * @param flags    extra compiler and linker flags
     * @return the library
     */
    public static Path compileSharedLibrary(String resource, Path dir, List<String> flags) {
        Path gcc = gcc();
        try (InputStream in = NativeToolchain.class.getClassLoader().getResourceAsStream(resource)) {
            Assertions.assertNotNull(in, "test resource " + resource);
            Path source = dir.resolve(Path.of(resource).getFileName());
            Files.write(source, in.readAllBytes());
            String name = source.getFileName().toString().replace(".c", "");
            Path library = dir.resolve("lib" + name + ".so");
            List<String> cmd = new ArrayList<>(List.of(gcc.toString(), "-std=c11", "-O1", "-g", "-Wall", "-Wextra",
                    "-Werror", "-fPIC", "-shared", "-o", library.toString(), source.toString()));
            cmd.addAll(flags);
            cmd.add("-lpthread");
            Result r = run(cmd, null);
            Assertions.assertEquals(0, r.exitCode(), "compiling " + resource + " failed:\n" + String.join(" ", cmd)
                    + "\n" + r.output());
            return library;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A finished process. */
    public record Result(int exitCode, String output) {
    }

    /**
     * Runs a command, feeding it {@code stdin}, and returns its exit code and combined output.
     *
     * @param command the command
     * @param stdin   the input, or null for none
     * @return the result
     */
    public static Result run(List<String> command, String stdin) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            try (var out = p.getOutputStream()) {
                if (stdin != null) {
                    out.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new AssertionError(command + " did not finish");
            }
            return new Result(p.exitValue(), output);
        } catch (IOException e) {
            throw new AssertionError("cannot run " + command + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static Path onPath(String name) {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/bin" : path + ":/usr/bin").split(":")) {
            if (!dir.isEmpty()) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }
}
