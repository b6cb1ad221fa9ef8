package io.datamem.ucx;

import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** Tagged receive on a context's worker: probe for the message's size, then receive it. */
final class TaggedReceive {

    private TaggedReceive() {
    }

    /**
     * Receives the next message with {@code tag} into {@code into} ({@code exact}: of its size
     * exactly), from any peer or, for messages, {@code from}.
     */
    static long receive(UcxContext c, long tag, MemorySegment into, UcxEndpoint from, boolean exact) {
        UcxChecks.checkNative(into);
        if (into.isReadOnly()) {
            throw new IllegalArgumentException("into: a read-only segment (expected: writable memory)");
        }
        String op = "receive with tag 0x" + Long.toHexString(tag) + " into " + into.byteSize() + " bytes";
        String peer = from == null ? null : from.peerName();
        UcxRegistration reg = c.registrationFor(into);
        c.workerLock().lock();
        try (Arena arena = Arena.ofConfined()) {
            c.checkOpen();
            long deadline = System.nanoTime() + c.options().timeout().toNanos();
            MemorySegment info = arena.allocate(UcpLayouts.TAG_RECV_INFO);
            while (Ucp.tagProbeNb(c.worker(), tag, -1L, 0, info).equals(MemorySegment.NULL)) {
                Ucp.workerProgress(c.worker());
                if (from != null) {
                    from.checkAlive(op);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new UcxException(op, peer, UcxException.TIMED_OUT, op + (peer == null ? "" : " from "
                            + peer) + ": no message within " + c.options().timeout() + " on " + c.id());
                }
                Thread.onSpinWait();
            }
            long length = info.get(JAVA_LONG, 8);
            if (length > into.byteSize() || (exact && length != into.byteSize())) {
                throw new UcxException(op, peer, UcpLayouts.UCS_ERR_MESSAGE_TRUNCATED, op + ": the message is "
                        + length + " bytes and the buffer " + into.byteSize() + " bytes (expected: "
                        + (exact ? "equal sizes" : "a buffer at least as large") + "); the message stays queued");
            }
            MemorySegment param = Requests.requestParam(arena, reg);
            MemorySegment req = Ucp.tagRecvNbx(c.worker(), into, into.byteSize(), tag, -1L, param);
            int st = c.await(req, deadline, from, info);
            UcxChecks.check(st, op, peer, into.byteSize());
            long received = info.get(JAVA_LONG, 8);
            if (received != length) {
                throw new UcxException(op, peer, UcpLayouts.UCS_ERR_MESSAGE_TRUNCATED, op + ": received " + received
                        + " bytes of a " + length + "-byte message");
            }
            return received;
        } finally {
            c.workerLock().unlock();
        }
    }
}
