package io.datamem.ucx;

import io.datamem.array.NDArray;
import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import javax.crypto.SecretKey;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A connection to a peer's worker ({@code ucp_ep_h}), with error handling mode
 * {@code UCP_ERR_HANDLING_MODE_PEER}: when the peer goes away, the operations in flight and those
 * posted later fail with a {@link UcxException} that names the peer and the operation, instead of
 * hanging.
 *
 * <p>Every transfer is zero-copy from and to the given memory: the local side is registered (the
 * block's own registration when it comes from {@code +ucx} or {@code ucx}, else the context's
 * {@linkplain UcxContext#registrationFor cache}), and the call returns when the transfer is complete
 * at both ends ({@link #put put} and {@link #get get} flush the endpoint). Offsets and lengths are
 * checked against the remote region before anything is posted: a transfer is never shortened.
 */
public final class UcxEndpoint implements AutoCloseable {

    private static final AtomicLong IDS = new AtomicLong();
    private static final Map<Long, UcxEndpoint> BY_ID = new ConcurrentHashMap<>();
    private static final MemorySegment ERROR_UPCALL = errorUpcall();

    private final UcxContext context;
    private final String peerName;
    private final long id;
    private final MemorySegment ep;
    private final Map<Long, MemorySegment> rkeys = new ConcurrentHashMap<>();   // keyId -> ucp_rkey_h
    private final Map<Long, RemoteRegion> rkeyRegions = new ConcurrentHashMap<>();
    private volatile int failure;
    private volatile boolean closed;

    private final boolean detectsPeerFailure;
    private final long peerPid;
    private long nextLivenessCheck;

    private final SecretKey regionKey;

    private UcxEndpoint(UcxContext context, String peerName, long id, MemorySegment ep, boolean detectsPeerFailure,
                        SecretKey regionKey) {
        this.regionKey = regionKey;
        this.context = context;
        this.peerName = peerName;
        this.id = id;
        this.ep = ep;
        this.detectsPeerFailure = detectsPeerFailure;
        this.peerPid = localPid(peerName, context.process());
    }

    /** The pid in a peer name {@code NAME@PID@HOST} on this host, else -1. */
    private static long localPid(String peerName, String process) {
        String[] parts = peerName.split("@");
        String host = process.substring(process.indexOf('@') + 1);
        if (parts.length >= 3 && parts[parts.length - 1].equals(host)) {
            try {
                return Long.parseLong(parts[parts.length - 2]);
            } catch (NumberFormatException e) {
                return -1;
            }
        }
        return -1;
    }

    private static MemorySegment errorUpcall() {
        try {
            var handle = MethodHandles.lookup().findStatic(UcxEndpoint.class, "onError",
                    MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class, int.class));
            return Linker.nativeLinker().upcallStub(handle, FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_INT),
                    Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** UCX's error callback: {@code void (*)(void *arg, ucp_ep_h ep, ucs_status_t status)}. Never throws. */
    private static void onError(MemorySegment arg, MemorySegment ep, int status) {
        UcxEndpoint e = BY_ID.get(arg.address());
        if (e != null && e.failure == 0) {
            e.failure = status;
        }
    }

    /** UCX 1.13's transports within a host, none of which has a peer failure handler. */
    private static final java.util.Set<String> HOST_ONLY_TRANSPORTS = java.util.Set.of("sm", "shm", "mm", "posix",
            "sysv", "cma", "knem", "xpmem", "self");

    /**
     * Whether a {@code TLS} value names only transports within a host: then the endpoint is created
     * without peer failure handling at once, instead of after UCX refused it (and logged an error).
     */
    static boolean hostOnly(String transports) {
        if (transports == null) {
            return false;
        }
        for (String t : transports.split(",")) {
            String name = t.strip();
            if (name.startsWith("^") || !HOST_ONLY_TRANSPORTS.contains(name)) {
                return false;
            }
        }
        return true;
    }

    static UcxEndpoint create(UcxContext context, byte[] peerAddress, String peerName, SecretKey regionKey) {
        if (hostOnly(context.options().transports())) {
            return create(context, peerAddress, peerName, false, regionKey);
        }
        try {
            return create(context, peerAddress, peerName, true, regionKey);
        } catch (UcxException e) {
            if (e.status() != UcpLayouts.UCS_ERR_UNREACHABLE) {
                throw e;
            }
            // UCX 1.13's shared-memory transports (posix, sysv) have no peer failure handler: connect
            // without one, and watch the peer's process instead (checkAlive)
            return create(context, peerAddress, peerName, false, regionKey);
        }
    }

    private static UcxEndpoint create(UcxContext context, byte[] peerAddress, String peerName, boolean peerMode,
                                      SecretKey regionKey) {
        long id = IDS.incrementAndGet();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment address = arena.allocate(peerAddress.length);
            address.copyFrom(MemorySegment.ofArray(peerAddress));
            MemorySegment params = arena.allocate(UcpLayouts.EP_PARAMS);
            params.set(JAVA_LONG, 0, UcpLayouts.EP_PARAM_FIELD_REMOTE_ADDRESS
                    | UcpLayouts.EP_PARAM_FIELD_ERR_HANDLING_MODE | UcpLayouts.EP_PARAM_FIELD_ERR_HANDLER
                    | UcpLayouts.EP_PARAM_FIELD_NAME);
            int mode = peerMode ? UcpLayouts.ERR_HANDLING_MODE_PEER : UcpLayouts.ERR_HANDLING_MODE_NONE;
            params.set(ADDRESS, UcpLayouts.offsetOf(UcpLayouts.EP_PARAMS, "address"), address);
            params.set(JAVA_INT, UcpLayouts.offsetOf(UcpLayouts.EP_PARAMS, "err_mode"), mode);
            long handler = UcpLayouts.offsetOf(UcpLayouts.EP_PARAMS, "err_handler");
            params.set(ADDRESS, handler, ERROR_UPCALL);
            params.set(ADDRESS, handler + 8, MemorySegment.ofAddress(id));
            String shortName = peerName.length() > 30 ? peerName.substring(0, 30) : peerName;
            params.set(ADDRESS, UcpLayouts.offsetOf(UcpLayouts.EP_PARAMS, "name"), arena.allocateFrom(shortName));
            MemorySegment out = arena.allocate(ADDRESS);
            UcxChecks.check(Ucp.epCreate(context.worker(), params, out), "connect (ucp_ep_create)", peerName, 0);
            UcxEndpoint e = new UcxEndpoint(context, peerName, id, out.get(ADDRESS, 0), peerMode, regionKey);
            BY_ID.put(id, e);
            return e;
        }
    }

    /**
     * The peer's name, as given to {@link UcxContext#connect}.
     *
     * @return the name
     */
    public String peerName() {
        return peerName;
    }

    /**
     * The context it belongs to.
     *
     * @return the context
     */
    public UcxContext context() {
        return context;
    }

    /**
     * Whether UCX reported this endpoint failed (the peer went away).
     *
     * @return true after a failure
     */
    public boolean failed() {
        return failure != 0;
    }

    /**
     * Whether UCX itself reports this peer's failure ({@code UCP_ERR_HANDLING_MODE_PEER}). Over
     * UCX 1.13's shared-memory transports it cannot; the endpoint then watches the peer's process
     * when the peer's name says it runs on this host ({@code NAME@PID@HOST}, as
     * {@link UcxBootstrap} names peers), and otherwise a dead peer shows as a timeout.
     *
     * @return true when UCX reports peer failures
     */
    public boolean detectsPeerFailure() {
        return detectsPeerFailure;
    }

    /** The failure status, after checking the peer's process at most every 50 ms when UCX cannot tell. */
    int failure() {
        if (failure == 0 && !detectsPeerFailure && peerPid > 0) {
            long now = System.nanoTime();
            if (now - nextLivenessCheck > 0) {
                nextLivenessCheck = now + 50_000_000L;
                if (!ProcessHandle.of(peerPid).map(ProcessHandle::isAlive).orElse(false)) {
                    failure = UcpLayouts.UCS_ERR_CONNECTION_RESET;
                }
            }
        }
        return failure;
    }

    void checkAlive(String operation) {
        int f = failure();
        if (f != 0) {
            UcxChecks.check(f, operation, peerName, 0);
        }
    }

    /**
     * Writes memory into a remote region ({@code ucp_put_nbx}, then a flush), returning when the
     * bytes are in the peer's memory.
     *
     * @param source       native memory
     * @param target       the peer's region
     * @param targetOffset where in the region the bytes go
     * @throws NullPointerException      if an argument is null
     * @throws IllegalArgumentException  if {@code source} is a heap segment or empty; or if the remote region is
     *                                   refused (not exported here, not sealed, or its seal does not
     *                                   verify under this endpoint's key: {@link RemoteRegion})
     * @throws IndexOutOfBoundsException if {@code targetOffset} is negative or the bytes do not fit
     *                                   in the region (the message names the sizes)
     * @throws IllegalStateException     if the endpoint or its context is closed
     * @throws UcxException              if the peer went away, the transfer failed or timed out
     */
    public void put(MemorySegment source, RemoteRegion target, long targetOffset) {
        rma(true, source, target, targetOffset);
    }

    /**
     * Writes an array's bytes into a remote region of exactly its size.
     *
     * @param source a live, C-contiguous array on host memory
     * @param target the peer's region
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the remote region is refused ({@link RemoteRegion}), or
     *                                      the array is not C-contiguous, or its size differs from
     *                                  the region's (the message names both)
     * @throws IllegalStateException    if the array, the endpoint or its context is closed
     * @throws UcxException             if the peer went away, the transfer failed or timed out
     */
    public void put(NDArray source, RemoteRegion target) {
        Objects.requireNonNull(target, "target");
        UcxChecks.withArray(source, "put", s -> {
            sameSize("put", s.byteSize(), target);
            rma(true, s, target, 0);
            return null;
        });
    }

    /**
     * Reads a remote region into memory ({@code ucp_get_nbx}, then a flush).
     *
     * @param source       the peer's region
     * @param sourceOffset where in the region to start
     * @param target       writable native memory; its size is the number of bytes read
     * @throws NullPointerException      if an argument is null
     * @throws IllegalArgumentException  if {@code target} is a heap segment, empty or read-only; or if the remote region is
     *                                   refused (not exported here, not sealed, or its seal does not
     *                                   verify under this endpoint's key: {@link RemoteRegion})
     * @throws IndexOutOfBoundsException if {@code sourceOffset} is negative or the bytes run past the
     *                                   region (the message names the sizes)
     * @throws IllegalStateException     if the endpoint or its context is closed
     * @throws UcxException              if the peer went away, the transfer failed or timed out
     */
    public void get(RemoteRegion source, long sourceOffset, MemorySegment target) {
        if (target != null && target.isReadOnly()) {
            throw new IllegalArgumentException("target: a read-only segment (expected: writable memory)");
        }
        rma(false, target, source, sourceOffset);
    }

    /**
     * Reads a remote region of exactly an array's size into the array.
     *
     * @param source the peer's region
     * @param target a live, writable, C-contiguous array on host memory
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the remote region is refused ({@link RemoteRegion}), or
     *                                      the array is not C-contiguous or read-only, or its size
     *                                  differs from the region's (the message names both)
     * @throws IllegalStateException    if the array, the endpoint or its context is closed
     * @throws UcxException             if the peer went away, the transfer failed or timed out
     */
    public void get(RemoteRegion source, NDArray target) {
        Objects.requireNonNull(source, "source");
        UcxChecks.withArray(target, "get into", s -> {
            sameSize("get", s.byteSize(), source);
            get(source, 0, s);
            return null;
        });
    }

    /**
     * Sends memory as one tagged message ({@code ucp_tag_send_nbx}), returning when the memory may
     * be reused.
     *
     * @param tag  the tag the receiver matches
     * @param data native memory
     * @throws NullPointerException     if {@code data} is null
     * @throws IllegalArgumentException if {@code data} is a heap segment or empty
     * @throws IllegalStateException    if the endpoint or its context is closed
     * @throws UcxException             if the peer went away, the send failed or timed out
     */
    public void send(long tag, MemorySegment data) {
        UcxChecks.checkNative(data);
        String op = "send of " + data.byteSize() + " bytes with tag 0x" + Long.toHexString(tag);
        UcxRegistration reg = context.registrationFor(data);
        lockAndRun(op, data.byteSize(), (arena, deadline) -> {
            MemorySegment param = Requests.requestParam(arena, reg);
            return context.await(Ucp.tagSendNbx(ep, data, data.byteSize(), tag, param), deadline, this, null);
        });
    }

    /**
     * Sends an array's bytes as one tagged message.
     *
     * @param tag   the tag
     * @param array a live, C-contiguous array on host memory
     * @throws NullPointerException     if {@code array} is null
     * @throws IllegalArgumentException if the array is not C-contiguous
     * @throws IllegalStateException    if the array, the endpoint or its context is closed
     * @throws UcxException             if the peer went away, the send failed or timed out
     */
    public void send(long tag, NDArray array) {
        UcxChecks.withArray(array, "send", s -> {
            send(tag, s);
            return null;
        });
    }

    /**
     * Receives the next message with this tag into memory, failing at once if this peer goes away
     * while waiting (see {@link UcxContext#receive(long, MemorySegment)}; the tag, not the endpoint,
     * selects the message).
     *
     * @param tag  the tag
     * @param into native memory at least as large as the message
     * @return the message's size
     * @throws NullPointerException     if {@code into} is null
     * @throws IllegalArgumentException if {@code into} is a heap segment or read-only
     * @throws IllegalStateException    if the endpoint or its context is closed
     * @throws UcxException             if the message is longer than {@code into}, this peer went
     *                                  away, no message arrived within the timeout, or UCX failed
     */
    public long receive(long tag, MemorySegment into) {
        checkOpen();
        return context.receive(tag, into, this, false);
    }

    /**
     * Receives the next message with this tag into an array of exactly its size.
     *
     * @param tag  the tag
     * @param into a live, writable, C-contiguous array on host memory
     * @throws NullPointerException     if {@code into} is null
     * @throws IllegalArgumentException if the array is not C-contiguous or read-only
     * @throws IllegalStateException    if the array, the endpoint or its context is closed
     * @throws UcxException             if the sizes differ (the message names both), this peer went
     *                                  away, no message arrived within the timeout, or UCX failed
     */
    public void receive(long tag, NDArray into) {
        checkOpen();
        UcxChecks.withArray(into, "receive into", s -> context.receive(tag, s, this, true));
    }

    /**
     * Waits until every operation posted on this endpoint is complete at the peer
     * ({@code ucp_ep_flush_nbx}).
     *
     * @throws IllegalStateException if the endpoint or its context is closed
     * @throws UcxException          if the peer went away or the flush timed out
     */
    public void flush() {
        lockAndRun("flush", 0, (arena, deadline) -> context.await(Ucp.epFlushNbx(ep,
                arena.allocate(UcpLayouts.REQUEST_PARAM)), deadline, this, null));
    }

    /**
     * Destroys the unpacked remote keys and closes the endpoint ({@code ucp_ep_close_nbx}: flushed,
     * or forced when the peer has gone). Idempotent. Never throws for a dead peer.
     *
     * @throws UcxException if a live peer's close fails
     */
    @Override
    public void close() {
        ReentrantLockHolder.run(context, () -> {
            if (closed) {
                return;
            }
            closed = true;
            BY_ID.remove(id);
            context.removed(this);
            for (MemorySegment rkey : rkeys.values()) {
                Ucp.rkeyDestroy(rkey);
            }
            rkeys.clear();
            rkeyRegions.clear();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment param = arena.allocate(UcpLayouts.REQUEST_PARAM);
                boolean force = failure != 0;
                if (force) {
                    param.set(JAVA_INT, 0, UcpLayouts.OP_ATTR_FIELD_FLAGS);
                    param.set(JAVA_INT, 4, UcpLayouts.EP_CLOSE_FLAG_FORCE);
                }
                long deadline = System.nanoTime() + Math.min(context.options().timeout().toNanos(), 5_000_000_000L);
                int st = context.await(Ucp.epCloseNbx(ep, param), deadline, null, null);
                if (!force && st != UcpLayouts.UCS_OK && failure == 0 && st != UcxException.TIMED_OUT) {
                    UcxChecks.check(st, "close", peerName, 0);
                }
            }
        });
    }

    void closeQuietly() {
        try {
            close();
        } catch (RuntimeException ignored) {
            // closing a context: the endpoint is gone either way
        }
    }

    /**
     * Whether {@link #close()} ran.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "UcxEndpoint[" + context.id() + " -> " + peerName + (failure != 0 ? ", failed: "
                + Ucp.statusString(failure) : "") + (closed ? ", closed" : "") + "]";
    }

    // ---- internals ----

    private void rma(boolean put, MemorySegment local, RemoteRegion remote, long remoteOffset) {
        String verb = put ? "put" : "get";
        Objects.requireNonNull(remote, put ? "target" : "source");
        remote.admit(regionKey, "the endpoint to " + peerName);   // before anything is read from it
        UcxChecks.checkNative(local);
        long n = local.byteSize();
        if (remoteOffset < 0 || remoteOffset > remote.byteSize() || n > remote.byteSize() - remoteOffset) {
            throw new IndexOutOfBoundsException(verb + " of " + n + " bytes at offset " + remoteOffset + " of " + remote
                    + " (expected: offset + length <= " + remote.byteSize() + ", the region's size)");
        }
        String op = verb + " of " + n + " bytes " + (put ? "to" : "from") + " 0x" + Long.toHexString(
                remote.address() + remoteOffset) + " (key #" + remote.keyId() + " of " + remote.owner() + ")";
        UcxRegistration reg = context.registrationFor(local);
        lockAndRun(op, n, (arena, deadline) -> {
            MemorySegment rkey = rkeyFor(remote, arena);
            MemorySegment param = Requests.requestParam(arena, reg);
            long addr = remote.address() + remoteOffset;
            MemorySegment req = put ? Ucp.putNbx(ep, local, n, addr, rkey, param)
                    : Ucp.getNbx(ep, local, n, addr, rkey, param);
            int st = context.await(req, deadline, this, null);
            if (st != UcpLayouts.UCS_OK) {
                return st;
            }
            return context.await(Ucp.epFlushNbx(ep, arena.allocate(UcpLayouts.REQUEST_PARAM)), deadline, this, null);
        });
    }

    private MemorySegment rkeyFor(RemoteRegion remote, Arena arena) {
        MemorySegment k = rkeys.get(remote.keyId());
        RemoteRegion known = rkeyRegions.get(remote.keyId());
        if (k != null && known != null && java.util.Arrays.equals(known.packedKey(), remote.packedKey())
                && known.owner().equals(remote.owner())) {
            return k;
        }
        if (k != null) {
            Ucp.rkeyDestroy(k);
            rkeys.remove(remote.keyId());
        }
        byte[] packed = remote.packedKey();
        MemorySegment buf = arena.allocate(packed.length);
        buf.copyFrom(MemorySegment.ofArray(packed));
        MemorySegment out = arena.allocate(ADDRESS);
        UcxChecks.check(Ucp.epRkeyUnpack(ep, buf, out), "unpack the remote key #" + remote.keyId() + " of "
                + remote.owner(), peerName, 0);
        k = out.get(ADDRESS, 0);
        rkeys.put(remote.keyId(), k);
        rkeyRegions.put(remote.keyId(), remote);
        return k;
    }

    private static void sameSize(String verb, long local, RemoteRegion remote) {
        if (local != remote.byteSize()) {
            throw new IllegalArgumentException(verb + ": the array is " + local + " bytes and the remote region "
                    + remote.byteSize() + " bytes (expected: equal sizes; put/get a segment with an offset for a part)");
        }
    }

    private interface Op {
        int run(Arena arena, long deadline);
    }

    private void lockAndRun(String op, long byteSize, Op body) {
        var lock = context.workerLock();
        lock.lock();
        try (Arena arena = Arena.ofConfined()) {
            checkOpen();
            context.checkOpen();
            checkAlive(op);
            long deadline = System.nanoTime() + context.options().timeout().toNanos();
            int st = body.run(arena, deadline);
            if (st == UcxException.TIMED_OUT) {
                throw new UcxException(op, peerName, st, op + " with peer " + peerName + ": not complete within "
                        + context.options().timeout() + " (timed out)");
            }
            UcxChecks.check(st, op, peerName, byteSize);
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static final class ReentrantLockHolder {
        static void run(UcxContext c, Runnable r) {
            c.workerLock().lock();
            try {
                r.run();
            } finally {
                c.workerLock().unlock();
            }
        }
    }

}
