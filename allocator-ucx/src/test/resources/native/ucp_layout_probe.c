/* Prints sizeof and offsetof of the UCP structs datamem's allocator-ucx lays out in Java
 * (io.datamem.ucx.internal.UcpLayouts), as "struct.field offset" lines, for UcpLayoutTest. */
#include <stddef.h>
#include <stdio.h>
#include <ucp/api/ucp.h>

#define SIZE(t) printf("%s.sizeof %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("%s.%s %zu\n", #t, #f, offsetof(t, f))

int main(void) {
    SIZE(ucp_params_t);
    OFF(ucp_params_t, field_mask); OFF(ucp_params_t, features); OFF(ucp_params_t, request_size);
    OFF(ucp_params_t, request_init); OFF(ucp_params_t, request_cleanup); OFF(ucp_params_t, tag_sender_mask);
    OFF(ucp_params_t, mt_workers_shared); OFF(ucp_params_t, estimated_num_eps);
    OFF(ucp_params_t, estimated_num_ppn); OFF(ucp_params_t, name);
    SIZE(ucp_worker_params_t);
    OFF(ucp_worker_params_t, field_mask); OFF(ucp_worker_params_t, thread_mode); OFF(ucp_worker_params_t, cpu_mask);
    OFF(ucp_worker_params_t, events); OFF(ucp_worker_params_t, user_data); OFF(ucp_worker_params_t, event_fd);
    OFF(ucp_worker_params_t, flags); OFF(ucp_worker_params_t, name); OFF(ucp_worker_params_t, am_alignment);
    OFF(ucp_worker_params_t, client_id);
    SIZE(ucp_ep_params_t);
    OFF(ucp_ep_params_t, field_mask); OFF(ucp_ep_params_t, address); OFF(ucp_ep_params_t, err_mode);
    OFF(ucp_ep_params_t, err_handler); OFF(ucp_ep_params_t, user_data); OFF(ucp_ep_params_t, flags);
    OFF(ucp_ep_params_t, sockaddr); OFF(ucp_ep_params_t, conn_request); OFF(ucp_ep_params_t, name);
    OFF(ucp_ep_params_t, local_sockaddr);
    SIZE(ucp_mem_map_params_t);
    OFF(ucp_mem_map_params_t, field_mask); OFF(ucp_mem_map_params_t, address); OFF(ucp_mem_map_params_t, length);
    OFF(ucp_mem_map_params_t, flags); OFF(ucp_mem_map_params_t, prot); OFF(ucp_mem_map_params_t, memory_type);
    SIZE(ucp_mem_attr_t);
    OFF(ucp_mem_attr_t, field_mask); OFF(ucp_mem_attr_t, address); OFF(ucp_mem_attr_t, length);
    OFF(ucp_mem_attr_t, mem_type);
    SIZE(ucp_worker_attr_t);
    OFF(ucp_worker_attr_t, field_mask); OFF(ucp_worker_attr_t, thread_mode); OFF(ucp_worker_attr_t, address_flags);
    OFF(ucp_worker_attr_t, address); OFF(ucp_worker_attr_t, address_length); OFF(ucp_worker_attr_t, max_am_header);
    OFF(ucp_worker_attr_t, name); OFF(ucp_worker_attr_t, max_debug_string);
    SIZE(ucp_request_param_t);
    OFF(ucp_request_param_t, op_attr_mask); OFF(ucp_request_param_t, flags); OFF(ucp_request_param_t, request);
    OFF(ucp_request_param_t, cb); OFF(ucp_request_param_t, datatype); OFF(ucp_request_param_t, user_data);
    OFF(ucp_request_param_t, reply_buffer); OFF(ucp_request_param_t, memory_type);
    OFF(ucp_request_param_t, recv_info); OFF(ucp_request_param_t, memh);
    SIZE(ucp_tag_recv_info_t);
    OFF(ucp_tag_recv_info_t, sender_tag); OFF(ucp_tag_recv_info_t, length);
    SIZE(ucp_err_handler_t);
    OFF(ucp_err_handler_t, cb); OFF(ucp_err_handler_t, arg);
    printf("UCP_API_MAJOR %d\nUCP_API_MINOR %d\n", UCP_API_MAJOR, UCP_API_MINOR);
    printf("UCS_ERR_MESSAGE_TRUNCATED %d\nUCS_INPROGRESS %d\nUCS_ERR_NO_ELEM %d\n", UCS_ERR_MESSAGE_TRUNCATED,
           UCS_INPROGRESS, UCS_ERR_NO_ELEM);
    printf("UCS_ERR_LAST %d\nUCS_ERR_CANCELED %d\nUCS_ERR_ENDPOINT_TIMEOUT %d\nUCS_ERR_CONNECTION_RESET %d\n",
           UCS_ERR_LAST, UCS_ERR_CANCELED, UCS_ERR_ENDPOINT_TIMEOUT, UCS_ERR_CONNECTION_RESET);
    printf("UCS_MEMORY_TYPE_HOST %d\nUCP_ERR_HANDLING_MODE_PEER %d\nUCS_THREAD_MODE_SERIALIZED %d\n",
           UCS_MEMORY_TYPE_HOST, UCP_ERR_HANDLING_MODE_PEER, UCS_THREAD_MODE_SERIALIZED);
    printf("UCS_ERR_UNREACHABLE %d\nUCS_ERR_TIMED_OUT %d\n", UCS_ERR_UNREACHABLE, UCS_ERR_TIMED_OUT);
#define BIT(c) printf("%s %llu\n", #c, (unsigned long long) (c))
    BIT(UCP_PARAM_FIELD_FEATURES); BIT(UCP_PARAM_FIELD_MT_WORKERS_SHARED); BIT(UCP_PARAM_FIELD_NAME);
    BIT(UCP_FEATURE_TAG); BIT(UCP_FEATURE_RMA); BIT(UCP_WORKER_PARAM_FIELD_THREAD_MODE);
    BIT(UCP_EP_PARAM_FIELD_REMOTE_ADDRESS); BIT(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE);
    BIT(UCP_EP_PARAM_FIELD_ERR_HANDLER); BIT(UCP_EP_PARAM_FIELD_NAME); BIT(UCP_EP_CLOSE_FLAG_FORCE);
    BIT(UCP_MEM_MAP_PARAM_FIELD_ADDRESS); BIT(UCP_MEM_MAP_PARAM_FIELD_LENGTH); BIT(UCP_MEM_MAP_PARAM_FIELD_FLAGS);
    BIT(UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE); BIT(UCP_MEM_MAP_ALLOCATE); BIT(UCP_MEM_ATTR_FIELD_ADDRESS);
    BIT(UCP_MEM_ATTR_FIELD_LENGTH); BIT(UCP_OP_ATTR_FIELD_MEMH); BIT(UCP_OP_ATTR_FIELD_FLAGS);
    return 0;
}
