package io.datamem.ucx;

import io.datamem.array.NDArray;
import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import javax.crypto.SecretKey;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static io.datamem.ucx.UcxChecks.check;
import static io.datamem.ucx.UcxChecks.checkNative;
import static io.datamem.ucx.UcxChecks.withArray;
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

    private static final Object SHARED_LOCK = new Object();
    private static volatile UcxContext shared;
    private static final String PROCESS = ProcessHandle.current().pid() + "@" + hostName();

    private final Options options;
    private final String id;
    private final MemorySegment context;
    private final MemorySegment worker;
    private final WorkerLock workerLock = new WorkerLock();
    private final RegistrationTable registrations;
    private final Set<UcxEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final Thread progressThread;

    private UcxContext(Options options, MemorySegment context, MemorySegment worker) {
        this.options = options;
        this.context = context;
        this.worker = worker;
        this.id = options.name() + "@" + PROCESS;
        this.registrations = new RegistrationTable(this, context);
        this.progressThread = options.progressThread() ? Thread.ofPlatform().daemon().name("ucx-progress-" + id)
                .start(new ProgressLoop(this)) : null;
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
        return connectWith(peerWorkerAddress, peerName, null);
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
        return connectWith(peerWorkerAddress, peerName, Objects.requireNonNull(regionKey, "regionKey"));
    }

    private UcxEndpoint connectWith(byte[] peerWorkerAddress, String peerName, SecretKey regionKey) {
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
        return registrations.map(memory.address(), memory.byteSize(), UcxRegistration.Origin.EXPLICIT, null);
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
        return registrations.registrationFor(memory);
    }

    /**
     * The registration covering this range, without registering anything.
     *
     * @param address  the first byte
     * @param byteSize the length
     * @return the live registration, or null
     */
    public UcxRegistration registrationOf(long address, long byteSize) {
        return registrations.covering(address, byteSize);
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
        return registrations.evict(memory);
    }

    /**
     * Unmaps the cached registrations whose memory's scope is closed (the cache also does this
     * before it maps new memory).
     *
     * @return how many were unmapped
     */
    public int sweepCache() {
        return registrations.sweepCache();
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
        UcxRegistration r = registrations.covering(memory.address(), memory.byteSize());
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
        return registrations.count(origin);
    }

    /**
     * How often {@link #registrationFor} found a registration, and how often it had to map one.
     *
     * @return {@code {hits, misses}}
     */
    public long[] cacheCounts() {
        return registrations.cacheCounts();
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
        return TaggedReceive.receive(this, tag, into, from, exact);
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
            for (UcxRegistration r : registrations.all()) {
                registrations.unmap(r);
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

    WorkerLock workerLock() {
        return workerLock;
    }

    /** Waits for a request with the worker lock held ({@link Requests#await}). */
    int await(MemorySegment req, long deadline, UcxEndpoint ep, MemorySegment tagInfo) {
        return Requests.await(worker, req, deadline, ep, tagInfo);
    }

    UcxRegistration map(long address, long byteSize, UcxRegistration.Origin origin, MemorySegment.Scope scope) {
        return registrations.map(address, byteSize, origin, scope);
    }

    /** {@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}; null when UCX has no memory. */
    UcxRegistration allocate(long byteSize) {
        return registrations.allocate(byteSize);
    }

    void unmap(UcxRegistration r) {
        registrations.unmap(r);
    }

    RemoteRegion pack(UcxRegistration r) {
        return registrations.pack(r);
    }

    void removed(UcxEndpoint ep) {
        endpoints.remove(ep);
    }










    void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }




    String process() {
        return PROCESS;
    }
}
