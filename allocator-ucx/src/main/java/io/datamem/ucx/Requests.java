package io.datamem.ucx;

import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static java.lang.foreign.ValueLayout.ADDRESS;

/** UCX requests: their parameters, and waiting for them on a worker. */
final class Requests {

    private Requests() {
    }

    /** A request parameter with the local memory handle. */
    static MemorySegment requestParam(Arena arena, UcxRegistration reg) {
        MemorySegment param = arena.allocate(UcpLayouts.REQUEST_PARAM);
        if (reg != null) {
            param.set(ValueLayout.JAVA_INT, 0, UcpLayouts.OP_ATTR_FIELD_MEMH);
            param.set(ADDRESS, UcpLayouts.offsetOf(UcpLayouts.REQUEST_PARAM, "memh"), reg.memh());
        }
        return param;
    }

    /**
     * Waits for a request with the worker lock held; frees it. On timeout, cancels it and returns
     * {@link UcxException#TIMED_OUT}.
     */
    static int await(MemorySegment worker, MemorySegment req, long deadline, UcxEndpoint ep, MemorySegment tagInfo) {
        if (req.equals(MemorySegment.NULL)) {
            return UcpLayouts.UCS_OK;
        }
        if (Ucp.isError(req)) {
            return Ucp.statusOf(req);
        }
        try {
            while (true) {
                Ucp.workerProgress(worker);
                int st = tagInfo == null ? Ucp.requestCheckStatus(req) : Ucp.tagRecvRequestTest(req, tagInfo);
                if (st != UcpLayouts.UCS_INPROGRESS) {
                    return st;
                }
                boolean late = System.nanoTime() - deadline > 0;
                boolean dead = ep != null && ep.failure() != 0;
                if (late || dead) {
                    Ucp.requestCancel(worker, req);
                    long until = System.nanoTime() + 1_000_000_000L;
                    while (Ucp.requestCheckStatus(req) == UcpLayouts.UCS_INPROGRESS && System.nanoTime() < until) {
                        Ucp.workerProgress(worker);
                    }
                    return dead ? ep.failure() : UcxException.TIMED_OUT;
                }
            }
        } finally {
            if (Ucp.requestCheckStatus(req) != UcpLayouts.UCS_INPROGRESS) {
                Ucp.requestFree(req);
            }
            // else: leaked deliberately; UCX still owns it (it is freed with the worker)
        }
    }
}
