package io.datamem.buffer;

import java.util.Objects;

/**
 * An object that exports its memory through the buffer protocol: CPython's {@code bf_getbuffer}
 * and the extended buffer protocol draft's {@code bf_supported_flags}.
 *
 * <p>Contract for implementations: {@link #getBuffer(int)} honours every request flag as CPython
 * does, refusing with a {@link BufferException} that names the flag when it cannot (writable
 * access to read-only data, a contiguity the data does not have, a request without
 * {@link BufferFlags#STRIDES} for non-C-contiguous data, device memory without
 * {@link BufferFlags#DEVICE}); the memory stays valid and in place until the view is released.
 * Build views with {@link BufferView#builder}, which checks them against the request; exporters of
 * strided memory let {@link BufferRequest} make those flag checks and fill the builder.
 *
 * <p>Consumers either call {@link #getBuffer(int)} directly, or {@link #request(BufferExporter,
 * int)}, which first checks the flags an exporter must not ignore ({@link BufferFlags#REQUIRED_FLAGS})
 * against {@link #supportedFlags()}, as the draft's {@code PyObject_GetBuffer} does.
 */
public interface BufferExporter {

    /**
     * Exports a view of this object's memory ({@code bf_getbuffer}).
     *
     * @param flags the {@link BufferFlags} the consumer can handle
     * @return the view; release it when done
     * @throws BufferException       if the request cannot be honoured; the message names the flag
     *                               and why
     * @throws IllegalStateException if the exporter is closed
     */
    BufferView getBuffer(int flags);

    /**
     * The draft's {@code bf_supported_flags}: the request flags this exporter honours.
     *
     * @return 0 for every classic flag ({@link BufferFlags#CLASSIC_FLAGS}, the default, which
     *         keeps existing exporters working), -1 for {@link BufferFlags#SIMPLE} only, otherwise
     *         the mask of supported flags
     */
    default int supportedFlags() {
        return 0;
    }

    /**
     * The draft's {@code PyObject_CheckBufferSupports(obj, flags)}: whether {@code obj} is a buffer
     * exporter that advertises support for every flag in {@code flags}. A supported-flags value of
     * 0 means every classic flag (not the extended ones), -1 means {@link BufferFlags#SIMPLE}
     * only.
     *
     * @param obj   any object, or null
     * @param flags the flags to check
     * @return false if {@code obj} is not a {@link BufferExporter} or lacks a flag
     */
    static boolean checkBufferSupports(Object obj, int flags) {
        if (!(obj instanceof BufferExporter exporter)) {
            return false;
        }
        return unsupported(exporter.supportedFlags(), flags) == 0;
    }

    /**
     * The draft's {@code PyObject_GetBuffer}: checks that the exporter supports the required part
     * of the request ({@code flags & REQUIRED_FLAGS}), then asks it for the buffer.
     *
     * @param exporter the exporter
     * @param flags    the request
     * @return the view; release it when done
     * @throws NullPointerException  if {@code exporter} is null
     * @throws BufferException       if the exporter does not advertise a required flag of the
     *                               request, or refuses the request
     * @throws IllegalStateException if the exporter is closed
     */
    static BufferView request(BufferExporter exporter, int flags) {
        Objects.requireNonNull(exporter, "exporter");
        int missing = unsupported(exporter.supportedFlags(), flags & BufferFlags.REQUIRED_FLAGS);
        if (missing != 0) {
            throw new BufferException(exporter + " does not support the request flag(s) "
                    + BufferFlags.describe(missing) + " of " + BufferFlags.describe(flags)
                    + " (its supported flags: " + describeSupported(exporter.supportedFlags()) + ")", missing);
        }
        BufferView view = exporter.getBuffer(flags);
        if (view.requestFlags() != flags) {
            view.release();
            throw new BufferException(exporter + " answered request " + BufferFlags.describe(flags)
                    + " with a view for " + BufferFlags.describe(view.requestFlags()));
        }
        return view;
    }

    private static int unsupported(int supported, int flags) {
        int mask = supported == 0 ? BufferFlags.CLASSIC_FLAGS : supported == -1 ? BufferFlags.SIMPLE : supported;
        return flags & ~mask;
    }

    private static String describeSupported(int supported) {
        return supported == 0 ? "0, every classic flag" : supported == -1 ? "-1, SIMPLE only"
                : BufferFlags.describe(supported);
    }
}
