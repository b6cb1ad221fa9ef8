package io.datamem.internal;

import java.util.function.Consumer;

/**
 * What code of this module outside {@code io.datamem.array} may ask of an array beyond its public
 * API, installed once by {@code NDArray} when it is initialised (typed {@code Object} here, so that
 * this package keeps depending on the JDK alone). Internal.
 */
public final class ArrayInternals {

    private static volatile Consumer<Object> nativeOnly;

    private ArrayInternals() {
    }

    /**
     * Installs the operations; only the first call counts.
     *
     * @param nativeOnlyOp {@link #nativeOnly}'s implementation
     */
    public static synchronized void install(Consumer<Object> nativeOnlyOp) {
        if (nativeOnly == null) {
            nativeOnly = nativeOnlyOp;
        }
    }

    /**
     * Gives up Java's element access to an array just made on the calling thread, for memory handed
     * to native code only (a tensor a C caller allocates through DLPack): no thread can then be
     * inside a Java access to it, so a close from any thread frees at once.
     *
     * @param array the {@code NDArray}, just created on the calling thread, not yet accessed
     * @throws IllegalStateException if the array is not such a new one
     */
    public static void nativeOnly(Object array) {
        nativeOnly.accept(array);   // installed: an NDArray exists, so its class is initialised
    }
}
