package io.datamem.internal;

/**
 * Whether the process has bound a handler with {@code DataMem.callWith}/{@code runWith}: what makes
 * an array allocated through the process default on a common-pool worker worth a warning (the
 * binding did not reach that worker). Internal.
 */
public final class Bindings {

    private static volatile boolean used;

    private Bindings() {
    }

    /** Records that a binding was made: one read, and one write the first time. */
    public static void mark() {
        if (!used) {
            used = true;
        }
    }

    /**
     * Whether a binding was ever made in this process.
     *
     * @return true once one was
     */
    public static boolean used() {
        return used;
    }
}
