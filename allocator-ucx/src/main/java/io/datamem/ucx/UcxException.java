package io.datamem.ucx;

/**
 * A UCX operation failed: a status other than {@code UCS_OK} from UCX (a peer that went away, a
 * message truncated, an unreachable address) or a wait that ran past its timeout. The message names
 * the operation, the peer when there is one, the byte count and UCX's status and its text.
 */
public class UcxException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The status of a wait that ran past its timeout ({@code UCS_ERR_TIMED_OUT}). */
    public static final int TIMED_OUT = -20;

    private final String operation;
    private final String peer;
    private final int status;

    /**
     * Creates the exception.
     *
     * @param operation what was being done, for example {@code put of 4096 bytes}
     * @param peer      the peer's name, or null when the operation has none
     * @param status    UCX's status ({@code ucs_status_t}), negative
     * @param message   the whole message
     */
    public UcxException(String operation, String peer, int status, String message) {
        super(message);
        this.operation = operation;
        this.peer = peer;
        this.status = status;
    }

    /**
     * What was being done.
     *
     * @return for example {@code put of 4096 bytes}
     */
    public String operation() {
        return operation;
    }

    /**
     * The peer of the operation.
     *
     * @return its name, or null for an operation without a peer (a registration)
     */
    public String peer() {
        return peer;
    }

    /**
     * UCX's status.
     *
     * @return a negative {@code ucs_status_t}, {@link #TIMED_OUT} for a timeout
     */
    public int status() {
        return status;
    }

    /**
     * Whether a wait ran past its timeout.
     *
     * @return true for a timeout
     */
    public boolean timedOut() {
        return status == TIMED_OUT;
    }
}
