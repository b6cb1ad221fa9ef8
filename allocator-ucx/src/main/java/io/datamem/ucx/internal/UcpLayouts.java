package io.datamem.ucx.internal;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The UCP structs of UCX 1.13's {@code ucp/api/ucp.h} and {@code ucp_def.h} (x86-64 and AArch64,
 * LP64), field by field, with their {@code field_mask} bits. {@code UcpLayoutTest} compiles a C
 * program against Debian's headers and compares every size and offset. Internal.
 */
public final class UcpLayouts {

    private UcpLayouts() {
    }

    /** {@code ucp_params_t}. */
    public static final StructLayout PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            JAVA_LONG.withName("features"),
            JAVA_LONG.withName("request_size"),
            ADDRESS.withName("request_init"),
            ADDRESS.withName("request_cleanup"),
            JAVA_LONG.withName("tag_sender_mask"),
            JAVA_INT.withName("mt_workers_shared"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("estimated_num_eps"),
            JAVA_LONG.withName("estimated_num_ppn"),
            ADDRESS.withName("name")).withName("ucp_params_t");

    /** {@code UCP_PARAM_FIELD_FEATURES}. */
    public static final long PARAM_FIELD_FEATURES = 1L;
    /** {@code UCP_PARAM_FIELD_MT_WORKERS_SHARED}. */
    public static final long PARAM_FIELD_MT_WORKERS_SHARED = 1L << 5;
    /** {@code UCP_PARAM_FIELD_NAME}. */
    public static final long PARAM_FIELD_NAME = 1L << 8;
    /** {@code UCP_FEATURE_TAG}. */
    public static final long FEATURE_TAG = 1L;
    /** {@code UCP_FEATURE_RMA}. */
    public static final long FEATURE_RMA = 1L << 1;

    /** {@code ucp_worker_params_t} ({@code ucs_cpu_set_t} is 128 bytes: 1024 CPUs). */
    public static final StructLayout WORKER_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            JAVA_INT.withName("thread_mode"),
            MemoryLayout.paddingLayout(4),
            MemoryLayout.sequenceLayout(16, JAVA_LONG).withName("cpu_mask"),
            JAVA_INT.withName("events"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("user_data"),
            JAVA_INT.withName("event_fd"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("flags"),
            ADDRESS.withName("name"),
            JAVA_LONG.withName("am_alignment"),
            JAVA_LONG.withName("client_id")).withName("ucp_worker_params_t");

    /** {@code UCP_WORKER_PARAM_FIELD_THREAD_MODE}. */
    public static final long WORKER_PARAM_FIELD_THREAD_MODE = 1L;
    /** {@code UCS_THREAD_MODE_SERIALIZED}: any thread, one at a time (the context's lock). */
    public static final int THREAD_MODE_SERIALIZED = 1;

    /** {@code ucp_err_handler_t}. */
    public static final StructLayout ERR_HANDLER = MemoryLayout.structLayout(
            ADDRESS.withName("cb"),
            ADDRESS.withName("arg")).withName("ucp_err_handler_t");

    /** {@code ucs_sock_addr_t}. */
    public static final StructLayout SOCK_ADDR = MemoryLayout.structLayout(
            ADDRESS.withName("addr"),
            JAVA_INT.withName("addrlen"),
            MemoryLayout.paddingLayout(4)).withName("ucs_sock_addr_t");

    /** {@code ucp_ep_params_t}. */
    public static final StructLayout EP_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            ADDRESS.withName("address"),
            JAVA_INT.withName("err_mode"),
            MemoryLayout.paddingLayout(4),
            ERR_HANDLER.withName("err_handler"),
            ADDRESS.withName("user_data"),
            JAVA_INT.withName("flags"),
            MemoryLayout.paddingLayout(4),
            SOCK_ADDR.withName("sockaddr"),
            ADDRESS.withName("conn_request"),
            ADDRESS.withName("name"),
            SOCK_ADDR.withName("local_sockaddr")).withName("ucp_ep_params_t");

    /** {@code UCP_EP_PARAM_FIELD_REMOTE_ADDRESS}. */
    public static final long EP_PARAM_FIELD_REMOTE_ADDRESS = 1L;
    /** {@code UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE}. */
    public static final long EP_PARAM_FIELD_ERR_HANDLING_MODE = 1L << 1;
    /** {@code UCP_EP_PARAM_FIELD_ERR_HANDLER}. */
    public static final long EP_PARAM_FIELD_ERR_HANDLER = 1L << 2;
    /** {@code UCP_EP_PARAM_FIELD_NAME}. */
    public static final long EP_PARAM_FIELD_NAME = 1L << 7;
    /** {@code UCP_ERR_HANDLING_MODE_NONE}. */
    public static final int ERR_HANDLING_MODE_NONE = 0;
    /** {@code UCS_ERR_UNREACHABLE}. */
    public static final int UCS_ERR_UNREACHABLE = -6;
    /** {@code UCS_ERR_CONNECTION_RESET}. */
    public static final int UCS_ERR_CONNECTION_RESET = -25;
    /** {@code UCP_ERR_HANDLING_MODE_PEER}. */
    public static final int ERR_HANDLING_MODE_PEER = 1;
    /** {@code UCP_EP_CLOSE_FLAG_FORCE}. */
    public static final int EP_CLOSE_FLAG_FORCE = 1;

    /** {@code ucp_mem_map_params_t}. */
    public static final StructLayout MEM_MAP_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            ADDRESS.withName("address"),
            JAVA_LONG.withName("length"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("prot"),
            JAVA_INT.withName("memory_type"),
            MemoryLayout.paddingLayout(4)).withName("ucp_mem_map_params_t");

    /** {@code UCP_MEM_MAP_PARAM_FIELD_ADDRESS}. */
    public static final long MEM_MAP_PARAM_FIELD_ADDRESS = 1L;
    /** {@code UCP_MEM_MAP_PARAM_FIELD_LENGTH}. */
    public static final long MEM_MAP_PARAM_FIELD_LENGTH = 1L << 1;
    /** {@code UCP_MEM_MAP_PARAM_FIELD_FLAGS}. */
    public static final long MEM_MAP_PARAM_FIELD_FLAGS = 1L << 2;
    /** {@code UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE}. */
    public static final long MEM_MAP_PARAM_FIELD_MEMORY_TYPE = 1L << 4;
    /** {@code UCP_MEM_MAP_ALLOCATE}. */
    public static final int MEM_MAP_ALLOCATE = 1 << 1;
    /** {@code UCS_MEMORY_TYPE_HOST}. */
    public static final int MEMORY_TYPE_HOST = 0;

    /** {@code ucp_mem_attr_t}. */
    public static final StructLayout MEM_ATTR = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            ADDRESS.withName("address"),
            JAVA_LONG.withName("length"),
            JAVA_INT.withName("mem_type"),
            MemoryLayout.paddingLayout(4)).withName("ucp_mem_attr_t");

    /** {@code UCP_MEM_ATTR_FIELD_ADDRESS}. */
    public static final long MEM_ATTR_FIELD_ADDRESS = 1L;
    /** {@code UCP_MEM_ATTR_FIELD_LENGTH}. */
    public static final long MEM_ATTR_FIELD_LENGTH = 1L << 1;

    /** {@code ucp_worker_attr_t} ({@code UCP_ENTITY_NAME_MAX} is 32). */
    public static final StructLayout WORKER_ATTR = MemoryLayout.structLayout(
            JAVA_LONG.withName("field_mask"),
            JAVA_INT.withName("thread_mode"),
            JAVA_INT.withName("address_flags"),
            ADDRESS.withName("address"),
            JAVA_LONG.withName("address_length"),
            JAVA_LONG.withName("max_am_header"),
            MemoryLayout.sequenceLayout(32, java.lang.foreign.ValueLayout.JAVA_BYTE).withName("name"),
            JAVA_LONG.withName("max_debug_string")).withName("ucp_worker_attr_t");

    /** {@code ucp_request_param_t} (its unions {@code cb} and {@code recv_info} are one pointer each). */
    public static final StructLayout REQUEST_PARAM = MemoryLayout.structLayout(
            JAVA_INT.withName("op_attr_mask"),
            JAVA_INT.withName("flags"),
            ADDRESS.withName("request"),
            ADDRESS.withName("cb"),
            JAVA_LONG.withName("datatype"),
            ADDRESS.withName("user_data"),
            ADDRESS.withName("reply_buffer"),
            JAVA_INT.withName("memory_type"),
            MemoryLayout.paddingLayout(4),
            ADDRESS.withName("recv_info"),
            ADDRESS.withName("memh")).withName("ucp_request_param_t");

    /** {@code UCP_OP_ATTR_FIELD_MEMH}. */
    public static final int OP_ATTR_FIELD_MEMH = 1 << 8;
    /** {@code UCP_OP_ATTR_FIELD_FLAGS}. */
    public static final int OP_ATTR_FIELD_FLAGS = 1 << 4;
    /** {@code UCP_OP_ATTR_FIELD_MEMORY_TYPE}. */
    public static final int OP_ATTR_FIELD_MEMORY_TYPE = 1 << 6;

    /** {@code ucp_tag_recv_info_t}. */
    public static final StructLayout TAG_RECV_INFO = MemoryLayout.structLayout(
            JAVA_LONG.withName("sender_tag"),
            JAVA_LONG.withName("length")).withName("ucp_tag_recv_info_t");

    /** {@code UCS_OK}. */
    public static final int UCS_OK = 0;
    /** {@code UCS_INPROGRESS}. */
    public static final int UCS_INPROGRESS = 1;
    /** {@code UCS_ERR_MESSAGE_TRUNCATED}. */
    public static final int UCS_ERR_MESSAGE_TRUNCATED = -9;
    /** {@code UCS_ERR_CANCELED}. */
    public static final int UCS_ERR_CANCELED = -16;
    /** {@code UCS_ERR_LAST}: pointers returned by {@code *_nbx} at or above this (as unsigned) are statuses. */
    public static final int UCS_ERR_LAST = -100;

    /**
     * The offset of a field, for the layout test.
     *
     * @param layout the struct
     * @param field  the field's C name
     * @return its byte offset
     * @throws IllegalArgumentException if the struct has no such field
     */
    public static long offsetOf(StructLayout layout, String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
