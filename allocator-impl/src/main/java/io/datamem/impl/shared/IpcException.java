package io.datamem.impl.shared;

import java.util.Objects;

/**
 * An IPC handle that cannot be opened, or a transport that failed. Nothing was mapped and no
 * descriptor was kept when this is thrown.
 */
public final class IpcException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a handle could not be opened. */
    public enum Reason {
        /** The exporting process is gone (or never existed). */
        EXPORTER_GONE,
        /**
         * The kernel refused to take the exporter's descriptor ({@code pidfd_getfd} needs ptrace
         * permission: the same user and Yama's {@code ptrace_scope} allowing it, or
         * {@code CAP_SYS_PTRACE}); send it over a socket instead.
         */
        NOT_PERMITTED,
        /**
         * The exporter has no such mapping any more, or never had: its descriptor is closed or is
         * another object than the handle names (a freed mapping, or a forged handle).
         */
        NO_SUCH_MAPPING,
        /**
         * The descriptor is the named object but the handle disagrees with it (size), or it is not
         * a sealed datamem mapping: a forged or corrupted handle, or a peer sending something else.
         */
        MISMATCH,
        /** The socket failed or the peer closed it or sent something that is not a handle. */
        TRANSPORT,
        /** A system call failed (mapping, descriptors). */
        SYSTEM
    }

    private final Reason reason;

    /**
     * An exception.
     *
     * @param reason  why
     * @param message what happened, naming the handle
     * @throws NullPointerException if {@code reason} is null
     */
    public IpcException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Why the handle could not be opened.
     *
     * @return the reason
     */
    public Reason reason() {
        return reason;
    }
}
