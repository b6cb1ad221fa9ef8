package io.datamem.buffer;

/**
 * An exporter cannot provide what was asked for: Python's {@code BufferError}. Thrown when a
 * buffer request cannot be honoured (a flag the data does not satisfy, device memory without
 * {@link BufferFlags#DEVICE}), and by the DLPack and SYCL USM interfaces when an array cannot be
 * described or a foreign tensor cannot be taken.
 *
 * <p>The message names the flag or field concerned and why; {@link #flag()} gives the request
 * flag programmatically when there is one.
 */
public class BufferException extends RuntimeException {

    private final int flag;

    /**
     * A refusal not tied to one request flag.
     *
     * @param message what was refused and why
     */
    public BufferException(String message) {
        this(message, BufferFlags.SIMPLE);
    }

    /**
     * A refusal of one request flag.
     *
     * @param message what was refused and why
     * @param flag    the {@link BufferFlags} constant concerned
     */
    public BufferException(String message, int flag) {
        super(message);
        this.flag = flag;
    }

    /**
     * A refusal caused by another failure.
     *
     * @param message what was refused and why
     * @param cause   the failure
     */
    public BufferException(String message, Throwable cause) {
        super(message, cause);
        this.flag = BufferFlags.SIMPLE;
    }

    /**
     * The request flag the refusal concerns.
     *
     * @return a {@link BufferFlags} constant, or {@link BufferFlags#SIMPLE} (0) when the refusal
     *         is not about one flag
     */
    public int flag() {
        return flag;
    }
}
