package io.datamem.ucx;

import io.datamem.array.NDArray;
import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import javax.crypto.SecretKey;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A UCX context ({@code ucp_context_h}, features RMA and TAG) with one worker
 * ({@code ucp_worker_h}): the registrations of this process's memory, the endpoints to peers, and
 * the progress of every transfer.
 *
 * <p>Progress happens in the calling thread: every blocking call drives the worker until its
 * operation completes, fails, or the context's {@linkplain Options#timeout() timeout} passes (then
 * a {@link UcxException} whose {@link UcxException#timedOut()} is true). Worker calls are
 * serialised by a lock, so a context may be shared by threads; registrations
 * ({@code ucp_mem_map}) do not take that lock.
 *
 * <p>Registrations live in one table ordered by address, so that the registration covering any
 * range is found in O(log n): the blocks of the {@code +ucx} adaptor and the {@code ucx} allocator,
 * {@linkplain #register explicit} registrations, and the {@linkplain #registrationFor cache}.
 */
public final class UcxContext implements AutoCloseable {

    /**
     * How a context is opened.
     *
     * @param transports the value of UCX's {@code TLS} setting for this context ({@code tcp},
     *                   {@code sm}, {@code posix,cma}, ...), or null for the environment's
     *                   {@code UCX_TLS} or UCX's default (every transport)
     * @param timeout    the longest a blocking call waits for its operation
     * @param name       the context's name, in messages and UCX's logs
     * @param progressThread whether a daemon thread drives the worker while no call does: needed
     *                   for a process that only exposes memory (over TCP, and over shared memory
     *                   for memory UCX did not allocate, a peer's put and get complete only while
     *                   the target's worker progresses)
     * @param progressSpin how long the progress thread keeps polling an idle worker before it
     *                   starts to back off (doubling sleeps up to 200 µs): zero backs off at once
     *                   (the least CPU), longer keeps a burst of transfers at polling latency for
     *                   the price of a core while it spins
     * @param allocationMethods the value of UCX's {@code ALLOC_PRIO} for this context: how
     *                   {@code ucp_mem_map} allocates the blocks of the {@code ucx} allocator
     *                   ({@link #ALLOC_PRIO} by default; {@link #SHARED_MEMORY_ALLOC_PRIO} puts
     *                   them in shared memory that peers on this host map, so that a put into them
     *                   is one copy by the sender with no work at the target)
     */
    public record Options(String transports, Duration timeout, String name, boolean progressThread,
                          Duration progressSpin, String allocationMethods) {

        /**
         * Validates the components.
         *
         * @throws NullPointerException     if {@code timeout}, {@code name}, {@code progressSpin}
         *                                  or {@code allocationMethods} is null
         * @throws IllegalArgumentException if {@code timeout} is not positive, {@code progressSpin}
         *                                  is negative, {@code transports} is blank, {@code name}
         *                                  is blank or {@code allocationMethods} is blank
         */
        public Options {
            Objects.requireNonNull(timeout, "timeout");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(progressSpin, "progressSpin");
            Objects.requireNonNull(allocationMethods, "allocationMethods");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
            }
            if (progressSpin.isNegative()) {
                throw new IllegalArgumentException("progressSpin: " + progressSpin + " (expected: >= 0)");
            }
            if (transports != null && transports.isBlank()) {
                throw new IllegalArgumentException("transports: '' (expected: null for UCX's default, or a UCX_TLS"
                        + " value such as tcp or sm)");
            }
            if (name.isBlank()) {
                throw new IllegalArgumentException("name: '' (expected: a name)");
            }
            if (allocationMethods.isBlank()) {
                throw new IllegalArgumentException("allocationMethods: '' (expected: a UCX ALLOC_PRIO value such as "
                        + ALLOC_PRIO + ")");
            }
        }

        /**
         * The first four components, with the default {@code progressSpin} and
         * {@code allocationMethods}.
         *
         * @param transports     see the record
         * @param timeout        see the record
         * @param name           see the record
         * @param progressThread see the record
         * @throws NullPointerException     if {@code timeout} or {@code name} is null
         * @throws IllegalArgumentException as the canonical constructor
         */
        public Options(String transports, Duration timeout, String name, boolean progressThread) {
            this(transports, timeout, name, progressThread, DEFAULT_PROGRESS_SPIN, ALLOC_PRIO);
        }

        /**
         * The defaults: UCX's transports, a 30-second timeout, the name {@code datamem}, a progress
         * thread that polls for {@link #DEFAULT_PROGRESS_SPIN} before backing off, allocation by
         * {@link #ALLOC_PRIO}.
         *
         * @return the defaults
         */
        public static Options defaults() {
            return new Options(null, Duration.ofSeconds(30), "datamem", true);
        }

        /**
         * These options with other transports.
         *
         * @param transports a {@code UCX_TLS} value, or null
         * @return the new options
         * @throws IllegalArgumentException if {@code transports} is blank
         */
        public Options withTransports(String transports) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }

        /**
         * These options with another timeout.
         *
         * @param timeout the timeout
         * @return the new options
         * @throws NullPointerException     if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Options withTimeout(Duration timeout) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }

        /**
         * These options with another name.
         *
         * @param name the name
         * @return the new options
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Options withName(String name) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }

        /**
         * These options with or without the progress thread.
         *
         * @param progressThread whether a daemon thread drives the worker
         * @return the new options
         */
        public Options withProgressThread(boolean progressThread) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }

        /**
         * These options with another spin before the progress thread backs off.
         *
         * @param progressSpin how long it polls an idle worker; zero backs off at once
         * @return the new options
         * @throws NullPointerException     if {@code progressSpin} is null
         * @throws IllegalArgumentException if {@code progressSpin} is negative
         */
        public Options withProgressSpin(Duration progressSpin) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }

        /**
         * These options with other allocation methods for the {@code ucx} allocator.
         *
         * @param allocationMethods a UCX {@code ALLOC_PRIO} value, such as {@link #ALLOC_PRIO} or
         *                          {@link #SHARED_MEMORY_ALLOC_PRIO}
         * @return the new options
         * @throws NullPointerException     if {@code allocationMethods} is null
         * @throws IllegalArgumentException if {@code allocationMethods} is blank
         */
        public Options withAllocationMethods(String allocationMethods) {
            return new Options(transports, timeout, name, progressThread, progressSpin, allocationMethods);
        }
    }

    /** UCX's {@code ALLOC_PRIO} by default: how {@code ucp_mem_map} allocates (see {@link UcxAllocator}). */
    public static final String ALLOC_PRIO = "thp,mmap";

    /**
     * An {@code ALLOC_PRIO} that allocates in POSIX shared memory first ({@code md:posix}: a file
     * in {@code /dev/shm} that UCX unlinks at once, peers open it through {@code /proc/PID/fd}),
     * then as {@link #ALLOC_PRIO}: a peer on this host maps such a block, so a put into it is one
     * copy by the sender.
     */
    public static final String SHARED_MEMORY_ALLOC_PRIO = "md:posix," + ALLOC_PRIO;

    /** The progress thread's default spin before it backs off. */
    public static final Duration DEFAULT_PROGRESS_SPIN = Duration.ZERO;

    private static final AtomicLong KEY_IDS = new AtomicLong();
    private static final Object SHARED_LOCK = new Object();
    private static volatile UcxContext shared;
    private static final String PROCESS = ProcessHandle.current().pid() + "@" + hostName();

    private final Options options;
    private final String id;
    private final MemorySegment context;
    private final MemorySegment worker;
    private final WorkerLock workerLock = new WorkerLock();
    private final ConcurrentSkipListMap<Long, UcxRegistration> registrations = new ConcurrentSkipListMap<>();
    private final Set<UcxEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    private final AtomicLong cacheHits = new AtomicLong();
    private final AtomicLong cacheMisses = new AtomicLong();
    private volatile boolean closed;
    private final Thread progressThread;

    private UcxContext(Options options, MemorySegment context, MemorySegment worker) {
        this.options = options;
        this.context = context;
        this.worker = worker;
        this.id = options.name() + "@" + PROCESS;
        this.progressThread = options.progressThread() ? Thread.ofPlatform().daemon().name("ucx-progress-" + id)
                .start(this::progressLoop) : null;
    }

    /**
     * Drives the worker while no caller does: polls it while events come and for
     * {@link Options#progressSpin()} after the last, then sleeps, backing off to 200 µs; it leaves
     * the worker alone while a caller holds or wants it.
     */
    private void progressLoop() {
        long spinNanos = options.progressSpin().toNanos();
        long lastEvent = System.nanoTime();
        long idleNanos = 0;
        while (!closed) {
            int events = 0;
            boolean driven = !workerLock.tryLockForProgress();
            if (!driven) {
                try {
                    if (closed) {
                        return;
                    }
                    events = Ucp.workerProgress(worker);
                } finally {
                    workerLock.unlockForProgress();
                }
            }
            if (!driven && events > 0) {
                lastEvent = System.nanoTime();
                idleNanos = 0;
            } else if (!driven && System.nanoTime() - lastEvent < spinNanos) {
                Thread.onSpinWait();   // a burst of transfers keeps going at polling latency
            } else {
                // idle, or a caller drives the worker until its operation completes (spinning
                // beside it would only take its core)
                idleNanos = Math.min(200_000, idleNanos * 2 + 1_000);
                java.util.concurrent.locks.LockSupport.parkNanos(idleNanos);
            }
        }
    }

    /**
     * The lock that serialises worker calls. A caller that wants it spins briefly before it blocks
     * (the progress thread holds it for one {@code ucp_worker_progress}, a few µs, and a parked
     * caller would wait tens of µs more to be woken), and the progress thread leaves the worker to
     * callers: it takes the lock only while none holds or wants it.
     */
    static final class WorkerLock extends ReentrantLock {
        private static final long SPIN_NANOS = 20_000;
        private final java.util.concurrent.atomic.AtomicInteger callers =
                new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public void lock() {
            callers.incrementAndGet();
            long until = System.nanoTime() + SPIN_NANOS;
            while (!tryLock()) {
                if (System.nanoTime() - until > 0) {
                    super.lock();
                    return;
                }
                Thread.onSpinWait();
            }
        }

        @Override
        public void unlock() {
            super.unlock();
            callers.decrementAndGet();
        }

        boolean tryLockForProgress() {
            return callers.get() == 0 && tryLock();
        }

        void unlockForProgress() {
            super.unlock();
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }

    /**
     * Whether UCX can be used here.
     *
     * @return null when it can, else why not (for example, {@code libucp.so.0} is missing)
     */
    public static String unavailableReason() {
        return Ucp.failure();
    }

    /**
     * The version of the UCX library in use.
     *
     * @return for example {@code 1.13.1}
     * @throws IllegalStateException if UCX cannot be loaded here
     */
    public static String ucxVersion() {
        return Ucp.version();
    }

    /**
     * Opens a context with the {@linkplain Options#defaults() defaults}.
     *
     * @return the context
     * @throws IllegalStateException if UCX cannot be loaded here
     * @throws UcxException          if UCX refuses to make the context or its worker
     */
    public static UcxContext open() {
        return open(Options.defaults());
    }

    /**
     * Opens a context.
     *
     * @param options how
     * @return the context
     * @throws NullPointerException  if {@code options} is null
     * @throws IllegalStateException if UCX cannot be loaded here
     * @throws UcxException          if UCX refuses the options (an unknown transport) or cannot make
     *                               the context or its worker
     */
    public static UcxContext open(Options options) {
        Objects.requireNonNull(options, "options");
        Ucp.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment configOut = arena.allocate(ADDRESS);
            check(Ucp.configRead(configOut), "ucp_config_read", null, 0);
            MemorySegment config = configOut.get(ADDRESS, 0);
            MemorySegment ctx;
            try {
                // UCX's default order starts with md:sysv and md:posix, which put blocks of the ucx
                // allocator in /dev/shm (tmpfs): a huge request fills it, and a killed process leaves
                // its file behind. Anonymous mappings go back to the OS with the process.
                check(Ucp.configModify(config, arena.allocateFrom("ALLOC_PRIO"),
                        arena.allocateFrom(options.allocationMethods())),
                        "ucp_config_modify(ALLOC_PRIO=" + options.allocationMethods() + ")", null, 0);
                if (options.transports() != null) {
                    check(Ucp.configModify(config, arena.allocateFrom("TLS"), arena.allocateFrom(options.transports())),
                            "ucp_config_modify(TLS=" + options.transports() + ")", null, 0);
                }
                MemorySegment params = arena.allocate(UcpLayouts.PARAMS);
                params.set(JAVA_LONG, 0, UcpLayouts.PARAM_FIELD_FEATURES | UcpLayouts.PARAM_FIELD_MT_WORKERS_SHARED
                        | UcpLayouts.PARAM_FIELD_NAME);
                params.set(JAVA_LONG, UcpLayouts.offsetOf(UcpLayouts.PARAMS, "features"),
                        UcpLayouts.FEATURE_RMA | UcpLayouts.FEATURE_TAG);
                params.set(ValueLayout.JAVA_INT, UcpLayouts.offsetOf(UcpLayouts.PARAMS, "mt_workers_shared"), 1);
                params.set(ADDRESS, UcpLayouts.offsetOf(UcpLayouts.PARAMS, "name"), arena.allocateFrom(options.name()));
                MemorySegment ctxOut = arena.allocate(ADDRESS);
                check(Ucp.init(params, config, ctxOut), "ucp_init", null, 0);
                ctx = ctxOut.get(ADDRESS, 0);
            } finally {
                Ucp.configRelease(config);
            }
            MemorySegment wparams = arena.allocate(UcpLayouts.WORKER_PARAMS);
            wparams.set(JAVA_LONG, 0, UcpLayouts.WORKER_PARAM_FIELD_THREAD_MODE);
            wparams.set(ValueLayout.JAVA_INT, UcpLayouts.offsetOf(UcpLayouts.WORKER_PARAMS, "thread_mode"),
                    UcpLayouts.THREAD_MODE_SERIALIZED);
            MemorySegment workerOut = arena.allocate(ADDRESS);
            int st = Ucp.workerCreate(ctx, wparams, workerOut);
            if (st != UcpLayouts.UCS_OK) {
                Ucp.cleanup(ctx);
                check(st, "ucp_worker_create", null, 0);
            }
            return new UcxContext(options, ctx, workerOut.get(ADDRESS, 0));
        }
    }

    /**
     * The process-wide context that the handler names {@code ucx} and {@code +ucx} register with,
     * opened with the defaults on first use and never closed.
     *
     * @return the shared context
     * @throws IllegalStateException if UCX cannot be loaded here
     * @throws UcxException          if UCX cannot make the context
     */
    public static UcxContext shared() {
        UcxContext c = shared;
        if (c == null) {
            synchronized (SHARED_LOCK) {
                c = shared;
                if (c == null) {
                    c = open(Options.defaults().withName("datamem-shared"));
                    shared = c;
                }
            }
        }
        return c;
    }

    /**
     * The options it was opened with.
     *
     * @return the options
     */
    public Options options() {
        return options;
    }

    /**
     * Its name in messages: {@code NAME@PID@HOST}.
     *
     * @return the name
     */
    public String id() {
        return id;
    }

    /**
     * The worker's address, which a peer passes to {@link #connect} ({@code ucp_worker_get_address}).
     *
     * @return the address bytes
     * @throws IllegalStateException if the context is closed
     * @throws UcxException          if UCX fails
     */
    public byte[] workerAddress() {
        workerLock.lock();
        try (Arena arena = Arena.ofConfined()) {
            checkOpen();
            MemorySegment out = arena.allocate(ADDRESS);
            MemorySegment len = arena.allocate(JAVA_LONG);
            check(Ucp.workerGetAddress(worker, out, len), "ucp_worker_get_address", null, 0);
            MemorySegment address = out.get(ADDRESS, 0);
            try {
                return address.reinterpret(len.get(JAVA_LONG, 0)).toArray(ValueLayout.JAVA_BYTE);
            } finally {
                Ucp.workerReleaseAddress(worker, address);
            }
        } finally {
            workerLock.unlock();
        }
    }

    /**
     * Connects to a peer's worker ({@code ucp_ep_create} with error handling mode
     * {@code UCP_ERR_HANDLING_MODE_PEER}, so that a peer that goes away fails the operations in
     * flight instead of hanging them). {@link UcxBootstrap} exchanges the addresses over a socket.
     *
     * @param peerWorkerAddress the peer's {@link #workerAddress()}
     * @param peerName          the peer's name, for messages
     * @return the endpoint
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the address is empty
     * @throws IllegalStateException    if the context is closed
     * @throws UcxException             if UCX cannot make the endpoint (no common transport)
     */
    public UcxEndpoint connect(byte[] peerWorkerAddress, String peerName) {
        return connect(peerWorkerAddress, peerName, null, "peerWorkerAddress");
    }

    /**
     * Connects to a peer's worker as {@link #connect(byte[], String)} does, with the key the two
     * sides share for sealed regions ({@link RemoteRegion#toBytes(SecretKey)}): the endpoint unpacks
     * the key of a region from the peer only if its seal verifies under this key. An endpoint made
     * without a key accepts only regions exported by contexts of this process.
     *
     * @param peerWorkerAddress the peer's {@link #workerAddress()}
     * @param peerName          the peer's name, for messages
     * @param regionKey         the shared key (HMAC-SHA256), for example
     *                          {@code new SecretKeySpec(secret, "HmacSHA256")}
     * @return the endpoint
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the address is empty
     * @throws IllegalStateException    if the context is closed
     * @throws UcxException             if UCX cannot make the endpoint (no common transport)
     */
    public UcxEndpoint connect(byte[] peerWorkerAddress, String peerName, SecretKey regionKey) {
        return connect(peerWorkerAddress, peerName, Objects.requireNonNull(regionKey, "regionKey"), "");
    }

    private UcxEndpoint connect(byte[] peerWorkerAddress, String peerName, SecretKey regionKey, String unused) {
        Objects.requireNonNull(peerWorkerAddress, "peerWorkerAddress");
        Objects.requireNonNull(peerName, "peerName");
        if (peerWorkerAddress.length == 0) {
            throw new IllegalArgumentException("peerWorkerAddress: 0 bytes (expected: a peer's workerAddress())");
        }
        workerLock.lock();
        try {
            checkOpen();
            UcxEndpoint ep = UcxEndpoint.create(this, peerWorkerAddress, peerName, regionKey);
            endpoints.add(ep);
            return ep;
        } finally {
            workerLock.unlock();
        }
    }

    // ---- registrations ----

    /**
     * Registers memory ({@code ucp_mem_map}); the caller closes the registration, before the memory
     * is freed.
     *
     * @param memory native memory
     * @return the registration
     * @throws NullPointerException     if {@code memory} is null
     * @throws IllegalArgumentException if {@code memory} is a heap segment or empty
     * @throws IllegalStateException    if the context is closed, or part of the range is registered
     *                                  already (the message names the registration)
     * @throws UcxException             if {@code ucp_mem_map} fails
     */
    public UcxRegistration register(MemorySegment memory) {
        checkNative(memory);
        return map(memory.address(), memory.byteSize(), UcxRegistration.Origin.EXPLICIT, null);
    }

    /**
     * The registration covering this memory, registering it through the cache when none does: the
     * way to register memory per transfer at the cost of a table lookup once it is cached. A cached
     * registration is unmapped when the memory's {@linkplain MemorySegment#scope() scope} is found
     * closed (the next time the cache is swept), by {@link #evict}, and at {@link #close()}; memory of
     * the global scope stays registered until one of the latter two.
     *
     * @param memory native memory
     * @return the registration (of the {@code +ucx} adaptor, the {@code ucx} allocator, an explicit
     *         one, or the cache's)
     * @throws NullPointerException     if {@code memory} is null
     * @throws IllegalArgumentException if {@code memory} is a heap segment or empty
     * @throws IllegalStateException    if the context is closed or the memory's scope is closed
     * @throws UcxException             if {@code ucp_mem_map} fails
     */
    public UcxRegistration registrationFor(MemorySegment memory) {
        checkNative(memory);
        UcxRegistration r = covering(memory.address(), memory.byteSize());
        if (r != null) {
            cacheHits.incrementAndGet();
            return r;
        }
        if (!memory.scope().isAlive()) {
            throw new IllegalStateException("cannot register " + memory + ": its scope is closed");
        }
        cacheMisses.incrementAndGet();
        sweep(memory.address(), memory.byteSize());
        return map(memory.address(), memory.byteSize(), UcxRegistration.Origin.CACHED, memory.scope());
    }

    /**
     * The registration covering this range, without registering anything.
     *
     * @param address  the first byte
     * @param byteSize the length
     * @return the live registration, or null
     */
    public UcxRegistration registrationOf(long address, long byteSize) {
        return covering(address, byteSize);
    }

    /**
     * Unmaps the cached registrations overlapping this memory.
     *
     * @param memory the memory
     * @return how many were unmapped
     * @throws NullPointerException if {@code memory} is null
     */
    public int evict(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory");
        int n = 0;
        for (UcxRegistration r : overlapping(memory.address(), Math.max(1, memory.byteSize()))) {
            if (r.origin() == UcxRegistration.Origin.CACHED) {
                unmap(r);
                n++;
            }
        }
        return n;
    }

    /**
     * Unmaps the cached registrations whose memory's scope is closed (the cache also does this
     * before it maps new memory).
     *
     * @return how many were unmapped
     */
    public int sweepCache() {
        int n = 0;
        for (UcxRegistration r : registrations.values()) {
            if (r.origin() == UcxRegistration.Origin.CACHED && !r.scope().isAlive()) {
                unmap(r);
                n++;
            }
        }
        return n;
    }

    /**
     * Exports this memory for peers: the {@link RemoteRegion} of the registration covering it,
     * narrowed to the memory.
     *
     * @param memory registered native memory
     * @return the region
     * @throws NullPointerException     if {@code memory} is null
     * @throws IllegalArgumentException if {@code memory} is a heap segment
     * @throws IllegalStateException    if no live registration covers the memory (it was never
     *                                  registered, or its block was freed): a key for freed memory is
     *                                  never handed out
     * @throws UcxException             if packing the key fails
     */
    public RemoteRegion export(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory");
        if (!memory.isNative()) {
            throw new IllegalArgumentException("memory: a heap segment (expected: native memory registered with "
                    + id + "; UCX reaches only native memory)");
        }
        UcxRegistration r = covering(memory.address(), memory.byteSize());
        if (r == null) {
            throw new IllegalStateException("cannot export 0x" + Long.toHexString(memory.address()) + " ("
                    + memory.byteSize() + " bytes): no live UCX registration of " + id + " covers it (allocate it"
                    + " through +ucx or ucx, or register it first; a freed block's key is refused)");
        }
        RemoteRegion whole = r.remoteRegion();
        return RemoteRegion.local(whole.owner(), whole.keyId(), memory.address(), memory.byteSize(),
                whole.packedKey());
    }

    /**
     * Exports an array's memory for peers (see {@link #export(MemorySegment)}).
     *
     * @param array a live, C-contiguous array on host memory
     * @return the region of its bytes
     * @throws NullPointerException     if {@code array} is null
     * @throws IllegalArgumentException if the array is not C-contiguous
     * @throws IllegalStateException    if the array is closed, or no live registration covers it
     * @throws UcxException             if packing the key fails
     */
    public RemoteRegion export(NDArray array) {
        return withArray(array, "export", this::export);
    }

    /**
     * The number of live registrations, of every origin.
     *
     * @return the count
     */
    public int liveRegistrations() {
        return registrations.size();
    }

    /**
     * The number of live registrations of one origin.
     *
     * @param origin the origin
     * @return the count
     * @throws NullPointerException if {@code origin} is null
     */
    public int liveRegistrations(UcxRegistration.Origin origin) {
        Objects.requireNonNull(origin, "origin");
        return (int) registrations.values().stream().filter(r -> r.origin() == origin).count();
    }

    /**
     * How often {@link #registrationFor} found a registration, and how often it had to map one.
     *
     * @return {@code {hits, misses}}
     */
    public long[] cacheCounts() {
        return new long[] {cacheHits.get(), cacheMisses.get()};
    }

    /**
     * The endpoints open on this context.
     *
     * @return a snapshot
     */
    public List<UcxEndpoint> endpoints() {
        return List.copyOf(endpoints);
    }

    // ---- tagged receive ----

    /**
     * Receives the next message sent with this tag, from any peer, into memory
     * ({@code ucp_tag_recv_nbx} after {@code ucp_tag_probe_nb} has told the message's size).
     *
     * @param tag  the tag
     * @param into native memory at least as large as the message
     * @return the message's size in bytes
     * @throws NullPointerException     if {@code into} is null
     * @throws IllegalArgumentException if {@code into} is a heap segment or read-only
     * @throws IllegalStateException    if the context is closed
     * @throws UcxException             if the message is longer than {@code into} (it stays queued,
     *                                  and the message names both sizes), no message arrives within
     *                                  the timeout, or UCX fails
     */
    public long receive(long tag, MemorySegment into) {
        return receive(tag, into, null, false);
    }

    /**
     * Receives the next message with this tag into an array, whose size it must match exactly.
     *
     * @param tag  the tag
     * @param into a live, writable, C-contiguous array on host memory
     * @throws NullPointerException     if {@code into} is null
     * @throws IllegalArgumentException if the array is not C-contiguous or read-only
     * @throws IllegalStateException    if the array or the context is closed
     * @throws UcxException             if the message's size differs from the array's (the message
     *                                  names both), none arrives within the timeout, or UCX fails
     */
    public void receive(long tag, NDArray into) {
        withArray(into, "receive into", s -> receive(tag, s, null, true));
    }

    long receive(long tag, MemorySegment into, UcxEndpoint from, boolean exact) {
        checkNative(into);
        if (into.isReadOnly()) {
            throw new IllegalArgumentException("into: a read-only segment (expected: writable memory)");
        }
        String op = "receive with tag 0x" + Long.toHexString(tag) + " into " + into.byteSize() + " bytes";
        String peer = from == null ? null : from.peerName();
        UcxRegistration reg = registrationFor(into);
        workerLock.lock();
        try (Arena arena = Arena.ofConfined()) {
            checkOpen();
            long deadline = System.nanoTime() + options.timeout().toNanos();
            MemorySegment info = arena.allocate(UcpLayouts.TAG_RECV_INFO);
            while (Ucp.tagProbeNb(worker, tag, -1L, 0, info).equals(MemorySegment.NULL)) {
                Ucp.workerProgress(worker);
                if (from != null) {
                    from.checkAlive(op);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new UcxException(op, peer, UcxException.TIMED_OUT, op + (peer == null ? "" : " from "
                            + peer) + ": no message within " + options.timeout() + " on " + id);
                }
                Thread.onSpinWait();
            }
            long length = info.get(JAVA_LONG, 8);
            if (length > into.byteSize() || (exact && length != into.byteSize())) {
                throw new UcxException(op, peer, UcpLayouts.UCS_ERR_MESSAGE_TRUNCATED, op + ": the message is "
                        + length + " bytes and the buffer " + into.byteSize() + " bytes (expected: "
                        + (exact ? "equal sizes" : "a buffer at least as large") + "); the message stays queued");
            }
            MemorySegment param = requestParam(arena, reg);
            MemorySegment req = Ucp.tagRecvNbx(worker, into, into.byteSize(), tag, -1L, param);
            int st = await(req, deadline, from, info);
            check(st, op, peer, into.byteSize());
            long received = info.get(JAVA_LONG, 8);
            if (received != length) {
                throw new UcxException(op, peer, UcpLayouts.UCS_ERR_MESSAGE_TRUNCATED, op + ": received " + received
                        + " bytes of a " + length + "-byte message");
            }
            return received;
        } finally {
            workerLock.unlock();
        }
    }

    /**
     * Drives the worker once ({@code ucp_worker_progress}).
     *
     * @return the number of events progressed
     * @throws IllegalStateException if the context is closed
     */
    public int progress() {
        workerLock.lock();
        try {
            checkOpen();
            return Ucp.workerProgress(worker);
        } finally {
            workerLock.unlock();
        }
    }

    /**
     * Closes the endpoints, unmaps every registration still in the table (blocks of allocators
     * included: their later free skips the unmap), destroys the worker and the context. Idempotent.
     * The {@linkplain #shared() shared} context is never closed.
     *
     * @throws UnsupportedOperationException if this is the shared context
     */
    @Override
    public void close() {
        if (this == shared) {
            throw new UnsupportedOperationException("the shared UCX context stays open until the JVM exits");
        }
        workerLock.lock();
        try {
            if (closed) {
                return;
            }
            for (UcxEndpoint ep : List.copyOf(endpoints)) {
                ep.closeQuietly();
            }
            for (UcxRegistration r : List.copyOf(registrations.values())) {
                unmap(r);
            }
            closed = true;
            Ucp.workerDestroy(worker);
            Ucp.cleanup(context);
        } finally {
            workerLock.unlock();
        }
        if (progressThread != null && progressThread != Thread.currentThread()) {
            try {
                progressThread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
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
        return "UcxContext[" + id + (options.transports() == null ? "" : ", TLS=" + options.transports()) + ", "
                + registrations.size() + " registrations, " + endpoints.size() + " endpoints" + (closed ? ", closed" : "")
                + "]";
    }

    // ---- package-private machinery ----

    MemorySegment worker() {
        return worker;
    }

    ReentrantLock workerLock() {
        return workerLock;
    }

    void removed(UcxEndpoint ep) {
        endpoints.remove(ep);
    }

    UcxRegistration map(long address, long byteSize, UcxRegistration.Origin origin, MemorySegment.Scope scope) {
        checkOpen();
        UcxRegistration existing = overlapping(address, byteSize).stream().findFirst().orElse(null);
        if (existing != null) {
            throw new IllegalStateException("cannot register 0x" + Long.toHexString(address) + " (" + byteSize
                    + " bytes): it overlaps " + existing);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(UcpLayouts.MEM_MAP_PARAMS);
            params.set(JAVA_LONG, 0, UcpLayouts.MEM_MAP_PARAM_FIELD_ADDRESS | UcpLayouts.MEM_MAP_PARAM_FIELD_LENGTH);
            params.set(ADDRESS, 8, MemorySegment.ofAddress(address));
            params.set(JAVA_LONG, 16, byteSize);
            MemorySegment out = arena.allocate(ADDRESS);
            check(Ucp.memMap(context, params, out), "ucp_mem_map of 0x" + Long.toHexString(address), null, byteSize);
            UcxRegistration r = new UcxRegistration(this, out.get(ADDRESS, 0), address, byteSize, origin,
                    KEY_IDS.incrementAndGet(), scope);
            registrations.put(address, r);
            return r;
        }
    }

    /** {@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}; null when UCX has no memory. */
    UcxRegistration allocate(long byteSize) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(UcpLayouts.MEM_MAP_PARAMS);
            params.set(JAVA_LONG, 0, UcpLayouts.MEM_MAP_PARAM_FIELD_ADDRESS | UcpLayouts.MEM_MAP_PARAM_FIELD_LENGTH
                    | UcpLayouts.MEM_MAP_PARAM_FIELD_FLAGS | UcpLayouts.MEM_MAP_PARAM_FIELD_MEMORY_TYPE);
            params.set(ADDRESS, 8, MemorySegment.NULL);
            params.set(JAVA_LONG, 16, byteSize);
            params.set(ValueLayout.JAVA_INT, 24, UcpLayouts.MEM_MAP_ALLOCATE);
            params.set(ValueLayout.JAVA_INT, 32, UcpLayouts.MEMORY_TYPE_HOST);
            MemorySegment out = arena.allocate(ADDRESS);
            int st = Ucp.memMap(context, params, out);
            if (st != UcpLayouts.UCS_OK) {
                return null;
            }
            MemorySegment memh = out.get(ADDRESS, 0);
            MemorySegment attr = arena.allocate(UcpLayouts.MEM_ATTR);
            attr.set(JAVA_LONG, 0, UcpLayouts.MEM_ATTR_FIELD_ADDRESS | UcpLayouts.MEM_ATTR_FIELD_LENGTH);
            st = Ucp.memQuery(memh, attr);
            if (st != UcpLayouts.UCS_OK) {
                Ucp.memUnmap(context, memh);
                check(st, "ucp_mem_query", null, byteSize);
            }
            long address = attr.get(ADDRESS, 8).address();
            long length = attr.get(JAVA_LONG, 16);
            UcxRegistration r = new UcxRegistration(this, memh, address, length, UcxRegistration.Origin.ALLOCATED,
                    KEY_IDS.incrementAndGet(), null);
            registrations.put(address, r);
            return r;
        }
    }

    void unmap(UcxRegistration r) {
        if (!r.markDead()) {
            return;
        }
        registrations.remove(r.address(), r);
        if (!closed) {
            int st = Ucp.memUnmap(context, r.memh());
            check(st, "ucp_mem_unmap of " + r, null, r.byteSize());
        }
    }

    RemoteRegion pack(UcxRegistration r) {
        try (Arena arena = Arena.ofConfined()) {
            checkOpen();
            MemorySegment buf = arena.allocate(ADDRESS);
            MemorySegment len = arena.allocate(JAVA_LONG);
            check(Ucp.rkeyPack(context, r.memh(), buf, len), "ucp_rkey_pack of " + r, null, r.byteSize());
            MemorySegment b = buf.get(ADDRESS, 0);
            try {
                byte[] key = b.reinterpret(len.get(JAVA_LONG, 0)).toArray(ValueLayout.JAVA_BYTE);
                return RemoteRegion.local(id, r.keyId(), r.address(), r.byteSize(), key);
            } finally {
                Ucp.rkeyBufferRelease(b);
            }
        }
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
    int await(MemorySegment req, long deadline, UcxEndpoint ep, MemorySegment tagInfo) {
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

    static void check(int status, String operation, String peer, long byteSize) {
        if (status == UcpLayouts.UCS_OK) {
            return;
        }
        String text = status == UcxException.TIMED_OUT ? "timed out" : Ucp.statusString(status);
        throw new UcxException(operation, peer, status, operation + (peer == null ? "" : " with peer " + peer)
                + (byteSize > 0 ? " (" + byteSize + " bytes)" : "") + " failed: " + text + " (UCX status " + status
                + ")");
    }

    static void checkNative(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory");
        if (!memory.isNative()) {
            throw new IllegalArgumentException("memory: a heap segment (expected: native memory; UCX reaches only"
                    + " native memory without a copy)");
        }
        if (memory.byteSize() == 0) {
            throw new IllegalArgumentException("memory: 0 bytes at 0x" + Long.toHexString(memory.address())
                    + " (expected: at least one byte)");
        }
    }

    static <T> T withArray(NDArray array, String what, java.util.function.Function<MemorySegment, T> action) {
        Objects.requireNonNull(array, "array");
        return array.whileHeld(() -> {
            if (!array.isCContiguous()) {
                throw new IllegalArgumentException("cannot " + what + " a non-C-contiguous array (shape "
                        + java.util.Arrays.toString(array.shape()) + ", strides " + java.util.Arrays.toString(
                        array.strides()) + "; expected: C-contiguous, copy it first)");
            }
            return action.apply(array.segment());
        });
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private UcxRegistration covering(long address, long byteSize) {
        Map.Entry<Long, UcxRegistration> e = registrations.floorEntry(address);
        if (e == null) {
            return null;
        }
        UcxRegistration r = e.getValue();
        if (!r.covers(address, byteSize)) {
            return null;
        }
        if (r.origin() == UcxRegistration.Origin.CACHED && !r.scope().isAlive()) {
            unmap(r);
            return null;
        }
        return r;
    }

    private List<UcxRegistration> overlapping(long address, long byteSize) {
        List<UcxRegistration> out = new ArrayList<>();
        Map.Entry<Long, UcxRegistration> below = registrations.floorEntry(address);
        if (below != null && below.getKey() + below.getValue().byteSize() > address) {
            out.add(below.getValue());
        }
        for (UcxRegistration r : registrations.subMap(address, false, address + byteSize, false).values()) {
            out.add(r);
        }
        return out;
    }

    /** Unmaps cached registrations whose scope is closed, and those overlapping a new range. */
    private void sweep(long address, long byteSize) {
        for (UcxRegistration r : overlapping(address, byteSize)) {
            if (r.origin() == UcxRegistration.Origin.CACHED) {
                unmap(r);
            }
        }
        sweepCache();
    }

    String process() {
        return PROCESS;
    }
}
