package io.datamem.ucx.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * FFM bindings of Debian's UCX 1.13 ({@code libucp.so.0}, {@code libucs.so.0}), loaded once, on
 * first use. Before the libraries are loaded, {@link #JVM_SAFE_ENVIRONMENT} is written into the
 * process environment with libc's {@code setenv}: UCX must not install its own signal handlers
 * (the JVM uses SIGSEGV and SIGBUS for implicit null checks and safepoints) nor hook {@code malloc}
 * and {@code mmap} (the JVM maps and unmaps its heap and code cache itself). Internal.
 */
public final class Ucp {

    /**
     * The UCX settings written before the libraries load, and why (docs/distributed.md lists them).
     * A value the user set beforehand is overwritten: each of these would break the JVM.
     */
    public static final Map<String, String> JVM_SAFE_ENVIRONMENT = jvmSafeEnvironment();

    private static Map<String, String> jvmSafeEnvironment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("UCX_ERROR_SIGNALS", "");            // no SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers of UCX's
        env.put("UCX_HANDLE_ERRORS", "none");        // no backtrace printing or freezing on a signal
        env.put("UCX_MEM_MALLOC_HOOKS", "no");       // libucm: no malloc/free hooks
        env.put("UCX_MEM_MMAP_HOOK_MODE", "none");   // libucm: no mmap/munmap/brk relocation or hooks
        env.put("UCX_MEMTYPE_CACHE", "n");           // relies on the memory hooks
        env.put("UCX_WARN_UNUSED_ENV_VARS", "n");
        return Map.copyOf(env);
    }

    /** Why UCX cannot be used here, or null once it is loaded. */
    private static final String FAILURE;

    private static final MethodHandle CONFIG_READ;
    private static final MethodHandle CONFIG_MODIFY;
    private static final MethodHandle CONFIG_RELEASE;
    private static final MethodHandle INIT_VERSION;
    private static final MethodHandle CLEANUP;
    private static final MethodHandle GET_VERSION;
    private static final MethodHandle WORKER_CREATE;
    private static final MethodHandle WORKER_DESTROY;
    private static final MethodHandle WORKER_GET_ADDRESS;
    private static final MethodHandle WORKER_RELEASE_ADDRESS;
    private static final MethodHandle WORKER_PROGRESS;
    private static final MethodHandle EP_CREATE;
    private static final MethodHandle EP_CLOSE_NBX;
    private static final MethodHandle EP_FLUSH_NBX;
    private static final MethodHandle MEM_MAP;
    private static final MethodHandle MEM_UNMAP;
    private static final MethodHandle MEM_QUERY;
    private static final MethodHandle RKEY_PACK;
    private static final MethodHandle RKEY_BUFFER_RELEASE;
    private static final MethodHandle EP_RKEY_UNPACK;
    private static final MethodHandle RKEY_DESTROY;
    private static final MethodHandle PUT_NBX;
    private static final MethodHandle GET_NBX;
    private static final MethodHandle TAG_SEND_NBX;
    private static final MethodHandle TAG_RECV_NBX;
    private static final MethodHandle TAG_PROBE_NB;
    private static final MethodHandle TAG_RECV_REQUEST_TEST;
    private static final MethodHandle REQUEST_CHECK_STATUS;
    private static final MethodHandle REQUEST_CANCEL;
    private static final MethodHandle REQUEST_FREE;
    private static final MethodHandle STATUS_STRING;
    private static final MethodHandle SETENV;

    static {
        Linker linker = Linker.nativeLinker();
        SETENV = linker.downcallHandle(linker.defaultLookup().find("setenv").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        String failure = null;
        SymbolLookup ucp = null;
        SymbolLookup ucs = null;
        try (Arena arena = Arena.ofConfined()) {
            for (Map.Entry<String, String> e : JVM_SAFE_ENVIRONMENT.entrySet()) {
                int rc = (int) SETENV.invokeExact(arena.allocateFrom(e.getKey()), arena.allocateFrom(e.getValue()), 1);
                if (rc != 0) {
                    failure = "setenv(" + e.getKey() + ") failed";
                }
            }
        } catch (Throwable t) {
            failure = "setenv failed: " + t;
        }
        if (failure == null) {
            try {
                ucs = SymbolLookup.libraryLookup("libucs.so.0", Arena.global());
                ucp = SymbolLookup.libraryLookup("libucp.so.0", Arena.global());
            } catch (IllegalArgumentException e) {
                failure = "UCX is not installed: libucp.so.0 or libucs.so.0 cannot be loaded (install the Debian"
                        + " package libucx0): " + e.getMessage();
            }
        }
        FAILURE = failure;
        boolean ok = failure == null;
        CONFIG_READ = ok ? bind(linker, ucp, "ucp_config_read", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        CONFIG_MODIFY = ok ? bind(linker, ucp, "ucp_config_modify", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        CONFIG_RELEASE = ok ? bind(linker, ucp, "ucp_config_release", null, ADDRESS) : null;
        INIT_VERSION = ok ? bind(linker, ucp, "ucp_init_version", JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS,
                ADDRESS) : null;
        CLEANUP = ok ? bind(linker, ucp, "ucp_cleanup", null, ADDRESS) : null;
        GET_VERSION = ok ? bind(linker, ucp, "ucp_get_version", null, ADDRESS, ADDRESS, ADDRESS) : null;
        WORKER_CREATE = ok ? bind(linker, ucp, "ucp_worker_create", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        WORKER_DESTROY = ok ? bind(linker, ucp, "ucp_worker_destroy", null, ADDRESS) : null;
        WORKER_GET_ADDRESS = ok ? bind(linker, ucp, "ucp_worker_get_address", JAVA_INT, ADDRESS, ADDRESS, ADDRESS)
                : null;
        WORKER_RELEASE_ADDRESS = ok ? bind(linker, ucp, "ucp_worker_release_address", null, ADDRESS, ADDRESS) : null;
        WORKER_PROGRESS = ok ? bind(linker, ucp, "ucp_worker_progress", JAVA_INT, ADDRESS) : null;
        EP_CREATE = ok ? bind(linker, ucp, "ucp_ep_create", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        EP_CLOSE_NBX = ok ? bind(linker, ucp, "ucp_ep_close_nbx", ADDRESS, ADDRESS, ADDRESS) : null;
        EP_FLUSH_NBX = ok ? bind(linker, ucp, "ucp_ep_flush_nbx", ADDRESS, ADDRESS, ADDRESS) : null;
        MEM_MAP = ok ? bind(linker, ucp, "ucp_mem_map", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        MEM_UNMAP = ok ? bind(linker, ucp, "ucp_mem_unmap", JAVA_INT, ADDRESS, ADDRESS) : null;
        MEM_QUERY = ok ? bind(linker, ucp, "ucp_mem_query", JAVA_INT, ADDRESS, ADDRESS) : null;
        RKEY_PACK = ok ? bind(linker, ucp, "ucp_rkey_pack", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS) : null;
        RKEY_BUFFER_RELEASE = ok ? bind(linker, ucp, "ucp_rkey_buffer_release", null, ADDRESS) : null;
        EP_RKEY_UNPACK = ok ? bind(linker, ucp, "ucp_ep_rkey_unpack", JAVA_INT, ADDRESS, ADDRESS, ADDRESS) : null;
        RKEY_DESTROY = ok ? bind(linker, ucp, "ucp_rkey_destroy", null, ADDRESS) : null;
        PUT_NBX = ok ? bind(linker, ucp, "ucp_put_nbx", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS,
                ADDRESS) : null;
        GET_NBX = ok ? bind(linker, ucp, "ucp_get_nbx", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS,
                ADDRESS) : null;
        TAG_SEND_NBX = ok ? bind(linker, ucp, "ucp_tag_send_nbx", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG,
                ADDRESS) : null;
        TAG_RECV_NBX = ok ? bind(linker, ucp, "ucp_tag_recv_nbx", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, ADDRESS) : null;
        TAG_PROBE_NB = ok ? bind(linker, ucp, "ucp_tag_probe_nb", ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT,
                ADDRESS) : null;
        TAG_RECV_REQUEST_TEST = ok ? bind(linker, ucp, "ucp_tag_recv_request_test", JAVA_INT, ADDRESS, ADDRESS)
                : null;
        REQUEST_CHECK_STATUS = ok ? bind(linker, ucp, "ucp_request_check_status", JAVA_INT, ADDRESS) : null;
        REQUEST_CANCEL = ok ? bind(linker, ucp, "ucp_request_cancel", null, ADDRESS, ADDRESS) : null;
        REQUEST_FREE = ok ? bind(linker, ucp, "ucp_request_free", null, ADDRESS) : null;
        STATUS_STRING = ok ? bind(linker, ucs, "ucs_status_string", ADDRESS, JAVA_INT) : null;
    }

    private Ucp() {
    }

    private static MethodHandle bind(Linker linker, SymbolLookup lookup, String name,
                                     java.lang.foreign.MemoryLayout result, java.lang.foreign.MemoryLayout... args) {
        MemorySegment symbol = lookup.find(name).orElseThrow(() -> new IllegalStateException(
                "UCX symbol " + name + " is missing (expected: UCX 1.13 or later)"));
        FunctionDescriptor fd = result == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(result, args);
        return linker.downcallHandle(symbol, fd);
    }

    /**
     * Why UCX cannot be used here.
     *
     * @return the reason, or null when the libraries are loaded
     */
    public static String failure() {
        return FAILURE;
    }

    /**
     * Fails unless UCX is loaded.
     *
     * @throws IllegalStateException if UCX cannot be loaded here, naming why
     */
    public static void require() {
        if (FAILURE != null) {
            throw new IllegalStateException(FAILURE);
        }
    }

    /**
     * Whether a pointer returned by a {@code *_nbx} call is an error status ({@code UCS_PTR_IS_ERR}).
     *
     * @param p the returned pointer
     * @return true for an error status
     */
    public static boolean isError(MemorySegment p) {
        return Long.compareUnsigned(p.address(), (long) UcpLayouts.UCS_ERR_LAST) >= 0;
    }

    /**
     * The status in a returned pointer ({@code UCS_PTR_STATUS}), for NULL or an error.
     *
     * @param p the returned pointer
     * @return the status
     */
    public static int statusOf(MemorySegment p) {
        return (int) p.address();
    }

    /**
     * UCX's text for a status.
     *
     * @param status the status
     * @return for example {@code Connection reset by remote peer}
     */
    public static String statusString(int status) {
        try {
            MemorySegment s = (MemorySegment) STATUS_STRING.invokeExact(status);
            return s.equals(MemorySegment.NULL) ? "status " + status : s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "status " + status;
        }
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---- thin wrappers: each returns what C returns ----

    /**
     * {@code ucp_config_read(NULL, NULL, out)}.
     *
     * @param out {@code ucp_config_t**}
     * @return the status
     */
    public static int configRead(MemorySegment out) {
        try {
            return (int) CONFIG_READ.invokeExact(MemorySegment.NULL, MemorySegment.NULL, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_config_modify}.
     *
     * @param config the config
     * @param name the name
     * @param value the value
     * @return the status
     */
    public static int configModify(MemorySegment config, MemorySegment name, MemorySegment value) {
        try {
            return (int) CONFIG_MODIFY.invokeExact(config, name, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_config_release}.
     *
     * @param config the config
     */
    public static void configRelease(MemorySegment config) {
        try {
            CONFIG_RELEASE.invokeExact(config);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_init_version(1, 13, ...)}.
     *
     * @param params the params
     * @param config the config
     * @param out the context out
     * @return the status
     */
    public static int init(MemorySegment params, MemorySegment config, MemorySegment out) {
        try {
            return (int) INIT_VERSION.invokeExact(1, 13, params, config, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_cleanup}.
     *
     * @param context the context
     */
    public static void cleanup(MemorySegment context) {
        try {
            CLEANUP.invokeExact(context);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_get_version}.
     *
     * @return for example {@code 1.13.1}
     * @throws IllegalStateException if UCX cannot be loaded here
     */
    public static String version() {
        require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT, 3);
            GET_VERSION.invokeExact(v, v.asSlice(4), v.asSlice(8));
            return v.getAtIndex(JAVA_INT, 0) + "." + v.getAtIndex(JAVA_INT, 1) + "." + v.getAtIndex(JAVA_INT, 2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_create}.
     *
     * @param context c
     * @param params p
     * @param out o
     * @return the status
     */
    public static int workerCreate(MemorySegment context, MemorySegment params, MemorySegment out) {
        try {
            return (int) WORKER_CREATE.invokeExact(context, params, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_destroy}.
     *
     * @param worker w
     */
    public static void workerDestroy(MemorySegment worker) {
        try {
            WORKER_DESTROY.invokeExact(worker);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_get_address}.
     *
     * @param worker w
     * @param address a
     * @param length l
     * @return the status
     */
    public static int workerGetAddress(MemorySegment worker, MemorySegment address, MemorySegment length) {
        try {
            return (int) WORKER_GET_ADDRESS.invokeExact(worker, address, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_release_address}.
     *
     * @param worker w
     * @param address a
     */
    public static void workerReleaseAddress(MemorySegment worker, MemorySegment address) {
        try {
            WORKER_RELEASE_ADDRESS.invokeExact(worker, address);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_worker_progress}.
     *
     * @param worker w
     * @return the events progressed
     */
    public static int workerProgress(MemorySegment worker) {
        try {
            return (int) WORKER_PROGRESS.invokeExact(worker);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_ep_create}.
     *
     * @param worker w
     * @param params p
     * @param out o
     * @return the status
     */
    public static int epCreate(MemorySegment worker, MemorySegment params, MemorySegment out) {
        try {
            return (int) EP_CREATE.invokeExact(worker, params, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_ep_close_nbx}.
     *
     * @param ep e
     * @param param p
     * @return a request or status
     */
    public static MemorySegment epCloseNbx(MemorySegment ep, MemorySegment param) {
        try {
            return (MemorySegment) EP_CLOSE_NBX.invokeExact(ep, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_ep_flush_nbx}.
     *
     * @param ep e
     * @param param p
     * @return a request or status
     */
    public static MemorySegment epFlushNbx(MemorySegment ep, MemorySegment param) {
        try {
            return (MemorySegment) EP_FLUSH_NBX.invokeExact(ep, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_mem_map}.
     *
     * @param context c
     * @param params p
     * @param out o
     * @return the status
     */
    public static int memMap(MemorySegment context, MemorySegment params, MemorySegment out) {
        try {
            return (int) MEM_MAP.invokeExact(context, params, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_mem_unmap}.
     *
     * @param context c
     * @param memh m
     * @return the status
     */
    public static int memUnmap(MemorySegment context, MemorySegment memh) {
        try {
            return (int) MEM_UNMAP.invokeExact(context, memh);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_mem_query}.
     *
     * @param memh m
     * @param attr a
     * @return the status
     */
    public static int memQuery(MemorySegment memh, MemorySegment attr) {
        try {
            return (int) MEM_QUERY.invokeExact(memh, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_rkey_pack}.
     *
     * @param context c
     * @param memh m
     * @param buffer b
     * @param size s
     * @return the status
     */
    public static int rkeyPack(MemorySegment context, MemorySegment memh, MemorySegment buffer, MemorySegment size) {
        try {
            return (int) RKEY_PACK.invokeExact(context, memh, buffer, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_rkey_buffer_release}.
     *
     * @param buffer b
     */
    public static void rkeyBufferRelease(MemorySegment buffer) {
        try {
            RKEY_BUFFER_RELEASE.invokeExact(buffer);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_ep_rkey_unpack}.
     *
     * @param ep e
     * @param buffer b
     * @param out o
     * @return the status
     */
    public static int epRkeyUnpack(MemorySegment ep, MemorySegment buffer, MemorySegment out) {
        try {
            return (int) EP_RKEY_UNPACK.invokeExact(ep, buffer, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_rkey_destroy}.
     *
     * @param rkey r
     */
    public static void rkeyDestroy(MemorySegment rkey) {
        try {
            RKEY_DESTROY.invokeExact(rkey);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_put_nbx}.
     *
     * @param ep e
     * @param buffer b
     * @param count c
     * @param remote r
     * @param rkey k
     * @param param p
     * @return a request or status
     */
    public static MemorySegment putNbx(MemorySegment ep, MemorySegment buffer, long count, long remote,
                                       MemorySegment rkey, MemorySegment param) {
        try {
            return (MemorySegment) PUT_NBX.invokeExact(ep, buffer, count, remote, rkey, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_get_nbx}.
     *
     * @param ep e
     * @param buffer b
     * @param count c
     * @param remote r
     * @param rkey k
     * @param param p
     * @return a request or status
     */
    public static MemorySegment getNbx(MemorySegment ep, MemorySegment buffer, long count, long remote,
                                       MemorySegment rkey, MemorySegment param) {
        try {
            return (MemorySegment) GET_NBX.invokeExact(ep, buffer, count, remote, rkey, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_tag_send_nbx}.
     *
     * @param ep e
     * @param buffer b
     * @param count c
     * @param tag t
     * @param param p
     * @return a request or status
     */
    public static MemorySegment tagSendNbx(MemorySegment ep, MemorySegment buffer, long count, long tag,
                                           MemorySegment param) {
        try {
            return (MemorySegment) TAG_SEND_NBX.invokeExact(ep, buffer, count, tag, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_tag_recv_nbx}.
     *
     * @param worker w
     * @param buffer b
     * @param count c
     * @param tag t
     * @param mask m
     * @param param p
     * @return a request or status
     */
    public static MemorySegment tagRecvNbx(MemorySegment worker, MemorySegment buffer, long count, long tag, long mask,
                                           MemorySegment param) {
        try {
            return (MemorySegment) TAG_RECV_NBX.invokeExact(worker, buffer, count, tag, mask, param);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_tag_probe_nb}.
     *
     * @param worker w
     * @param tag t
     * @param mask m
     * @param remove r
     * @param info i
     * @return a message handle or NULL
     */
    public static MemorySegment tagProbeNb(MemorySegment worker, long tag, long mask, int remove, MemorySegment info) {
        try {
            return (MemorySegment) TAG_PROBE_NB.invokeExact(worker, tag, mask, remove, info);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_tag_recv_request_test}.
     *
     * @param request r
     * @param info i
     * @return the status
     */
    public static int tagRecvRequestTest(MemorySegment request, MemorySegment info) {
        try {
            return (int) TAG_RECV_REQUEST_TEST.invokeExact(request, info);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_request_check_status}.
     *
     * @param request r
     * @return the status
     */
    public static int requestCheckStatus(MemorySegment request) {
        try {
            return (int) REQUEST_CHECK_STATUS.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_request_cancel}.
     *
     * @param worker w
     * @param request r
     */
    public static void requestCancel(MemorySegment worker, MemorySegment request) {
        try {
            REQUEST_CANCEL.invokeExact(worker, request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ucp_request_free}.
     *
     * @param request r
     */
    public static void requestFree(MemorySegment request) {
        try {
            REQUEST_FREE.invokeExact(request);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
