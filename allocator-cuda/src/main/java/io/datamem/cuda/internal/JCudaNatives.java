package io.datamem.cuda.internal;

import jcuda.JCudaVersion;
import jcuda.LibUtils;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Makes JCuda's JNI library loadable on the module path too.
 *
 * <p>JCuda loads {@code libJCudaRuntime-VERSION-linux-x86_64.so} with
 * {@code LibUtils.class.getResourceAsStream("/lib/...")}, copying it to {@code java.io.tmpdir}; it
 * loads an existing copy there as it is. On the class path that resource lookup sees the natives
 * jar; on the module path {@code jcuda} is an automatic module whose resource lookup sees only its
 * own jar, so the natives jar (another module) is not found. Before JCuda loads, this class looks
 * the library up through the system class loader (which sees resources outside packages of every
 * module) and, when JCuda could not find it itself, writes it where JCuda looks. Internal.
 */
final class JCudaNatives {

    private JCudaNatives() {
    }

    /**
     * The file name of JCuda's runtime JNI library on this platform.
     *
     * @return for example {@code libJCudaRuntime-12.6.0-linux-x86_64.so}
     */
    static String runtimeLibraryFileName() {
        return LibUtils.createLibraryFileName(LibUtils.createPlatformLibraryName("JCudaRuntime-" + JCudaVersion.get()));
    }

    /**
     * Whether JCuda's own lookup finds its runtime library (true on the class path).
     *
     * @return true if {@code LibUtils} sees the resource
     */
    static boolean visibleToJCuda() {
        return LibUtils.class.getResource("/lib/" + runtimeLibraryFileName()) != null;
    }

    /**
     * Where JCuda looks for an extracted copy.
     *
     * @return {@code java.io.tmpdir}/the file name
     */
    static Path extractedPath() {
        return Path.of(System.getProperty("java.io.tmpdir"), runtimeLibraryFileName());
    }

    /**
     * Writes the runtime library where JCuda loads it from if JCuda could not find it itself.
     *
     * @return a line saying what was done, for diagnostics
     */
    static String prepare() {
        String file = runtimeLibraryFileName();
        if (visibleToJCuda()) {
            return "JCuda finds " + file + " itself";
        }
        Path target = extractedPath();
        if (Files.isRegularFile(target)) {
            return "JCuda loads the existing " + target;
        }
        try (InputStream in = ClassLoader.getSystemClassLoader().getResourceAsStream("lib/" + file)) {
            if (in == null) {
                return file + " is on neither the class path nor the module path (add org.jcuda:jcuda-natives,"
                        + " classifier linux-x86_64)";
            }
            Path dir = target.getParent();
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, file, ".part");
            try {
                Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(temp);
            }
            return "extracted " + file + " to " + target + " for JCuda";
        } catch (IOException e) {
            return "could not extract " + file + " to " + target + ": " + e;
        }
    }
}
