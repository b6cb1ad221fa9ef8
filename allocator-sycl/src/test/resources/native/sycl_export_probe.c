/*
 * A consumer of datamem's SYCL exports, compiled at test time against the OpenCL headers
 * (ocl-icd-opencl-dev) and Debian's libdlpack-dev, linked with the ICD loader the JVM already uses.
 * It does what a SYCL program does through the OpenCL backend interop: it takes the exported
 * cl_context / cl_device_id / cl_command_queue (sycl::make_context, make_device and make_queue
 * retain them and query their relations), asks the runtime what a pointer is, and runs a kernel
 * on USM memory through the adopted queue.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* datamem_sycl_device_info_v1, as docs/sycl.md and SyclDeviceInfo define it. */
typedef struct {
    uint32_t version;
    uint32_t byte_size;
    int32_t device_type;
    int32_t device_id;
    uint32_t memory_kind;
    uint32_t reserved;
    uint64_t queue;
    uint64_t context;
    uint64_t device_handle;
    uint32_t usm_kind;
    uint32_t backend;
    uint64_t platform;
} datamem_sycl_device_info_v1;

#define DM_kDLOneAPI 14 /* dlpack.h 0.6 predates it */
#define PROBE_BAD_STRUCT (-1001)
#define PROBE_DEVICE_NOT_IN_CONTEXT (-1002)
#define PROBE_QUEUE_NOT_OF_CONTEXT (-1003)
#define PROBE_QUEUE_NOT_OF_DEVICE (-1004)
#define PROBE_NO_EXTENSION (-1005)

int probe_layout(int64_t *out) {
    int64_t v[] = {
        (int64_t) sizeof(datamem_sycl_device_info_v1),
        (int64_t) offsetof(datamem_sycl_device_info_v1, version),
        (int64_t) offsetof(datamem_sycl_device_info_v1, byte_size),
        (int64_t) offsetof(datamem_sycl_device_info_v1, device_type),
        (int64_t) offsetof(datamem_sycl_device_info_v1, device_id),
        (int64_t) offsetof(datamem_sycl_device_info_v1, memory_kind),
        (int64_t) offsetof(datamem_sycl_device_info_v1, reserved),
        (int64_t) offsetof(datamem_sycl_device_info_v1, queue),
        (int64_t) offsetof(datamem_sycl_device_info_v1, context),
        (int64_t) offsetof(datamem_sycl_device_info_v1, device_handle),
        (int64_t) offsetof(datamem_sycl_device_info_v1, usm_kind),
        (int64_t) offsetof(datamem_sycl_device_info_v1, backend),
        (int64_t) offsetof(datamem_sycl_device_info_v1, platform),
    };
    memcpy(out, v, sizeof v);
    return (int) (sizeof v / sizeof v[0]);
}

static cl_platform_id platform_of(cl_device_id device, cl_int *err) {
    cl_platform_id p = NULL;
    *err = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof p, &p, NULL);
    return p;
}

/* What make_context + make_device + make_queue check: the device is one of the context's, the queue
 * belongs to both. Returns CL_SUCCESS or a negative code. Retains and releases as SYCL's interop does. */
static cl_int adopt(cl_context ctx, cl_device_id dev, cl_command_queue q) {
    cl_int err = clRetainContext(ctx);
    if (err != CL_SUCCESS) {
        return err;
    }
    cl_device_id devices[64];
    size_t bytes = 0;
    err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devices, devices, &bytes);
    int member = 0;
    for (size_t i = 0; err == CL_SUCCESS && i < bytes / sizeof devices[0]; i++) {
        member |= devices[i] == dev;
    }
    if (err == CL_SUCCESS && !member) {
        err = PROBE_DEVICE_NOT_IN_CONTEXT;
    }
    if (err == CL_SUCCESS && q != NULL) {
        cl_context qctx = NULL;
        cl_device_id qdev = NULL;
        err = clRetainCommandQueue(q);
        if (err == CL_SUCCESS) {
            err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
            if (err == CL_SUCCESS) {
                err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
            }
            if (err == CL_SUCCESS && qctx != ctx) {
                err = PROBE_QUEUE_NOT_OF_CONTEXT;
            }
            if (err == CL_SUCCESS && qdev != dev) {
                err = PROBE_QUEUE_NOT_OF_DEVICE;
            }
            clReleaseCommandQueue(q);
        }
    }
    clReleaseContext(ctx);
    return err;
}

/* sycl::get_pointer_type / get_pointer_device over the OpenCL extension: the kind (a
 * CL_MEM_TYPE_*_INTEL value), base, size and device of the allocation holding ptr. */
static cl_int alloc_info(cl_platform_id platform, cl_context ctx, const void *ptr, uint64_t *out) {
    clGetMemAllocInfoINTEL_fn info = (clGetMemAllocInfoINTEL_fn)
            clGetExtensionFunctionAddressForPlatform(platform, "clGetMemAllocInfoINTEL");
    if (info == NULL) {
        return PROBE_NO_EXTENSION;
    }
    cl_unified_shared_memory_type_intel type = 0;
    void *base = NULL;
    size_t size = 0;
    cl_device_id device = NULL;
    cl_int err = info(ctx, ptr, CL_MEM_ALLOC_TYPE_INTEL, sizeof type, &type, NULL);
    if (err == CL_SUCCESS) {
        err = info(ctx, ptr, CL_MEM_ALLOC_BASE_PTR_INTEL, sizeof base, &base, NULL);
    }
    if (err == CL_SUCCESS) {
        err = info(ctx, ptr, CL_MEM_ALLOC_SIZE_INTEL, sizeof size, &size, NULL);
    }
    if (err == CL_SUCCESS) {
        err = info(ctx, ptr, CL_MEM_ALLOC_DEVICE_INTEL, sizeof device, &device, NULL);
    }
    out[0] = type;
    out[1] = (uint64_t) (uintptr_t) base;
    out[2] = size;
    out[3] = (uint64_t) (uintptr_t) device;
    return err;
}

/* A buffer consumer: reads the device_info by field name, adopts its handles, and describes ptr
 * (the buffer's buf) in its context. out: the four alloc_info values. */
int probe_device_info(const datamem_sycl_device_info_v1 *dinfo, const void *ptr, uint64_t *out) {
    if (dinfo->version != 1 || dinfo->byte_size < sizeof *dinfo || dinfo->backend != 1
            || dinfo->device_type != DM_kDLOneAPI || dinfo->reserved != 0) {
        return PROBE_BAD_STRUCT;
    }
    cl_context ctx = (cl_context) (uintptr_t) dinfo->context;
    cl_device_id dev = (cl_device_id) (uintptr_t) dinfo->device_handle;
    cl_int err = adopt(ctx, dev, (cl_command_queue) (uintptr_t) dinfo->queue);
    if (err != CL_SUCCESS) {
        return err;
    }
    cl_platform_id platform = platform_of(dev, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    if ((uint64_t) (uintptr_t) platform != dinfo->platform) {
        return PROBE_BAD_STRUCT;
    }
    return alloc_info(platform, ctx, ptr, out);
}

/* A DLPack consumer given the syclobj's handles: reads the DLTensor (of a legacy or versioned
 * tensor) and describes its data pointer. device: device_type, device_id. */
int probe_dltensor(const DLTensor *t, cl_context ctx, cl_device_id dev, int32_t *device, uint64_t *out) {
    device[0] = (int32_t) t->device.device_type;
    device[1] = t->device.device_id;
    cl_int err = adopt(ctx, dev, NULL);
    if (err != CL_SUCCESS) {
        return err;
    }
    cl_platform_id platform = platform_of(dev, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    return alloc_info(platform, ctx, (const char *) t->data + t->byte_offset, out);
}

/* What a SYCL program does with the syclobj: adopt context, device and queue, then run a kernel
 * on the USM pointer in that queue (x[i] = 2 * x[i] + 1 for n floats). Returns CL_SUCCESS or the
 * first error. */
int adopt_and_scale(cl_context ctx, cl_device_id dev, cl_command_queue q, float *x, cl_uint n) {
    cl_int err = adopt(ctx, dev, q);
    if (err != CL_SUCCESS) {
        return err;
    }
    cl_platform_id platform = platform_of(dev, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    clSetKernelArgMemPointerINTEL_fn set_ptr = (clSetKernelArgMemPointerINTEL_fn)
            clGetExtensionFunctionAddressForPlatform(platform, "clSetKernelArgMemPointerINTEL");
    if (set_ptr == NULL) {
        return PROBE_NO_EXTENSION;
    }
    const char *source = "kernel void scale(global float *x, uint n) {"
                         "  size_t i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i] + 1.0f; }";
    cl_program program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    if (err != CL_SUCCESS) {
        return err;
    }
    err = clBuildProgram(program, 1, &dev, "", NULL, NULL);
    cl_kernel kernel = NULL;
    if (err == CL_SUCCESS) {
        kernel = clCreateKernel(program, "scale", &err);
    }
    if (err == CL_SUCCESS) {
        err = set_ptr(kernel, 0, x);
    }
    if (err == CL_SUCCESS) {
        err = clSetKernelArg(kernel, 1, sizeof n, &n);
    }
    if (err == CL_SUCCESS) {
        size_t global = n;
        err = clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS) {
        err = clFinish(q);
    }
    if (kernel != NULL) {
        clReleaseKernel(kernel);
    }
    clReleaseProgram(program);
    return err;
}
