package io.datamem.dlpack;

/**
 * The {@code copy} argument of {@code __dlpack__}: whether the producer may, must or must not copy.
 */
public enum CopyMode {
    /** {@code copy=True}: always export a copy the consumer owns (flagged {@code IS_COPIED}). */
    ALWAYS,
    /** {@code copy=False}: never copy; fail if sharing the memory is impossible. */
    NEVER,
    /** {@code copy=None} (the default): share the memory, copy only when the request needs it. */
    IF_NEEDED
}
