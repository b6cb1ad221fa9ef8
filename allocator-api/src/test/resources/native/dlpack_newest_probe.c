/*
 * A consumer of DLPack's newest specification (dlpack.h 1.3: dmlc/dlpack tag v1.3), compiled at
 * test time. Debian's libdlpack-dev ships an older header (0.6), so nothing is included from it:
 * the declarations below are written from the specification's text (the DLPack version, device and
 * type-code enumerations through kDLTrn and kDLFloat4_e2m1fn, the structs, the flag bits and the
 * C exchange API's DLPackManagedTensorAllocator), with a dl13_ prefix so that they can never be
 * mistaken for a copy of the header.
 *
 * It checks the layout and the codes against datamem's, and calls a DLPackManagedTensorAllocator
 * (datamem's upcall) as native code would: asks for a tensor like a prototype, checks what it got,
 * writes and reads every byte of it, and frees it through its deleter, on its own thread or a new
 * one.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DL13_MAJOR_VERSION 1
#define DL13_MINOR_VERSION 3

typedef struct {
    uint32_t major;
    uint32_t minor;
} dl13_Version;

typedef enum {
    dl13_kDLCPU = 1,
    dl13_kDLCUDA = 2,
    dl13_kDLCUDAHost = 3,
    dl13_kDLOpenCL = 4,
    dl13_kDLVulkan = 7,
    dl13_kDLMetal = 8,
    dl13_kDLVPI = 9,
    dl13_kDLROCM = 10,
    dl13_kDLROCMHost = 11,
    dl13_kDLExtDev = 12,
    dl13_kDLCUDAManaged = 13,
    dl13_kDLOneAPI = 14,
    dl13_kDLWebGPU = 15,
    dl13_kDLHexagon = 16,
    dl13_kDLMAIA = 17,
    dl13_kDLTrn = 18,
} dl13_DeviceType;

typedef enum {
    dl13_kDLInt = 0,
    dl13_kDLUInt = 1,
    dl13_kDLFloat = 2,
    dl13_kDLOpaqueHandle = 3,
    dl13_kDLBfloat = 4,
    dl13_kDLComplex = 5,
    dl13_kDLBool = 6,
    dl13_kDLFloat8_e3m4 = 7,
    dl13_kDLFloat8_e4m3 = 8,
    dl13_kDLFloat8_e4m3b11fnuz = 9,
    dl13_kDLFloat8_e4m3fn = 10,
    dl13_kDLFloat8_e4m3fnuz = 11,
    dl13_kDLFloat8_e5m2 = 12,
    dl13_kDLFloat8_e5m2fnuz = 13,
    dl13_kDLFloat8_e8m0fnu = 14,
    dl13_kDLFloat6_e2m3fn = 15,
    dl13_kDLFloat6_e3m2fn = 16,
    dl13_kDLFloat4_e2m1fn = 17,
} dl13_DataTypeCode;

typedef struct {
    dl13_DeviceType device_type;
    int32_t device_id;
} dl13_Device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} dl13_DataType;

typedef struct {
    void *data;
    dl13_Device device;
    int32_t ndim;
    dl13_DataType dtype;
    int64_t *shape;
    int64_t *strides;   /* 1.2 and later: never NULL when ndim != 0 */
    uint64_t byte_offset;
} dl13_Tensor;

typedef struct dl13_ManagedTensor {
    dl13_Tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl13_ManagedTensor *self);
} dl13_ManagedTensor;

#define DL13_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DL13_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DL13_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct dl13_ManagedTensorVersioned {
    dl13_Version version;
    void *manager_ctx;
    void (*deleter)(struct dl13_ManagedTensorVersioned *self);
    uint64_t flags;
    dl13_Tensor dl_tensor;
} dl13_ManagedTensorVersioned;

/* 0 on success with *out set; otherwise non-zero, and SetError called exactly once. */
typedef int (*dl13_ManagedTensorAllocator)(dl13_Tensor *prototype, dl13_ManagedTensorVersioned **out,
                                           void *error_ctx,
                                           void (*SetError)(void *error_ctx, const char *kind, const char *message));

int probe_layout(int64_t *out) {
    int64_t v[] = {
        DL13_MAJOR_VERSION, DL13_MINOR_VERSION,
        (int64_t) sizeof(dl13_Tensor),
        (int64_t) offsetof(dl13_Tensor, data),
        (int64_t) offsetof(dl13_Tensor, device),
        (int64_t) offsetof(dl13_Tensor, ndim),
        (int64_t) offsetof(dl13_Tensor, dtype),
        (int64_t) offsetof(dl13_Tensor, shape),
        (int64_t) offsetof(dl13_Tensor, strides),
        (int64_t) offsetof(dl13_Tensor, byte_offset),
        (int64_t) sizeof(dl13_ManagedTensor),
        (int64_t) offsetof(dl13_ManagedTensor, manager_ctx),
        (int64_t) offsetof(dl13_ManagedTensor, deleter),
        (int64_t) sizeof(dl13_ManagedTensorVersioned),
        (int64_t) offsetof(dl13_ManagedTensorVersioned, version),
        (int64_t) offsetof(dl13_ManagedTensorVersioned, manager_ctx),
        (int64_t) offsetof(dl13_ManagedTensorVersioned, deleter),
        (int64_t) offsetof(dl13_ManagedTensorVersioned, flags),
        (int64_t) offsetof(dl13_ManagedTensorVersioned, dl_tensor),
        (int64_t) sizeof(dl13_Device),
        (int64_t) sizeof(dl13_DataType),
        (int64_t) DL13_FLAG_BITMASK_READ_ONLY,
        (int64_t) DL13_FLAG_BITMASK_IS_COPIED,
        (int64_t) DL13_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
        /* device types: count, then the codes */
        16,
        dl13_kDLCPU, dl13_kDLCUDA, dl13_kDLCUDAHost, dl13_kDLOpenCL, dl13_kDLVulkan, dl13_kDLMetal, dl13_kDLVPI,
        dl13_kDLROCM, dl13_kDLROCMHost, dl13_kDLExtDev, dl13_kDLCUDAManaged, dl13_kDLOneAPI, dl13_kDLWebGPU,
        dl13_kDLHexagon, dl13_kDLMAIA, dl13_kDLTrn,
        /* type codes: count, then the codes */
        18,
        dl13_kDLInt, dl13_kDLUInt, dl13_kDLFloat, dl13_kDLOpaqueHandle, dl13_kDLBfloat, dl13_kDLComplex,
        dl13_kDLBool, dl13_kDLFloat8_e3m4, dl13_kDLFloat8_e4m3, dl13_kDLFloat8_e4m3b11fnuz,
        dl13_kDLFloat8_e4m3fn, dl13_kDLFloat8_e4m3fnuz, dl13_kDLFloat8_e5m2, dl13_kDLFloat8_e5m2fnuz,
        dl13_kDLFloat8_e8m0fnu, dl13_kDLFloat6_e2m3fn, dl13_kDLFloat6_e3m2fn, dl13_kDLFloat4_e2m1fn,
    };
    memcpy(out, v, sizeof v);
    return (int) (sizeof v / sizeof v[0]);
}

/* ---------------------------------------------------------------------------------------------
 * The allocator's caller.
 */

typedef struct {
    int calls;
    char kind[64];
    char message[1024];
} error_ctx;

static void set_error(void *ctx, const char *kind, const char *message) {
    error_ctx *e = (error_ctx *) ctx;
    e->calls++;
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    snprintf(e->message, sizeof e->message, "%s", message);
}

/*
 * Asks for a tensor like the prototype. Returns it, or NULL with err holding
 * "<rc> <SetError calls> <kind>: <message>". A failure that leaves *out non-NULL, or does not call
 * SetError exactly once, or a success that calls it, is reported as "protocol: ...".
 */
dl13_ManagedTensorVersioned *allocate_like(dl13_ManagedTensorAllocator alloc, int32_t device_type, int32_t device_id,
                                           int32_t code, int32_t bits, int32_t lanes, int32_t ndim,
                                           const int64_t *shape, char *err, int32_t errlen) {
    dl13_Tensor prototype;
    memset(&prototype, 0, sizeof prototype);
    prototype.device.device_type = (dl13_DeviceType) device_type;
    prototype.device.device_id = device_id;
    prototype.ndim = ndim;
    prototype.dtype.code = (uint8_t) code;
    prototype.dtype.bits = (uint8_t) bits;
    prototype.dtype.lanes = (uint16_t) lanes;
    prototype.shape = (int64_t *) shape;
    prototype.data = (void *) 0x1;   /* ignored by the allocator, as the specification says */
    error_ctx e;
    memset(&e, 0, sizeof e);
    dl13_ManagedTensorVersioned *out = (dl13_ManagedTensorVersioned *) 0x2;
    int rc = alloc(&prototype, &out, &e, set_error);
    err[0] = 0;
    if (rc == 0) {
        if (e.calls != 0) {
            snprintf(err, (size_t) errlen, "protocol: success, but SetError called %d time(s)", e.calls);
            return NULL;
        }
        if (out == NULL || out == (dl13_ManagedTensorVersioned *) 0x2) {
            snprintf(err, (size_t) errlen, "protocol: success, but *out not set");
            return NULL;
        }
        return out;
    }
    if (e.calls != 1 || out != NULL) {
        snprintf(err, (size_t) errlen, "protocol: failure %d with SetError called %d time(s) and *out %p", rc,
                 e.calls, (void *) out);
        return NULL;
    }
    snprintf(err, (size_t) errlen, "%d %d %s: %s", rc, e.calls, e.kind, e.message);
    return NULL;
}

/*
 * Checks a tensor the allocator returned against its prototype's dtype, ndim and shape (C order,
 * strides set), then writes byte k of its data with k * 7 + 3 and reads every byte back. Reports
 * into r: version major, minor, flags, device type, device id, data address, byte count, bytes
 * checked. Returns 0, or -1 with err set.
 */
int check_and_fill(dl13_ManagedTensorVersioned *t, int32_t code, int32_t bits, int32_t lanes, int32_t ndim,
                   const int64_t *shape, int64_t *r, char *err, int32_t errlen) {
    dl13_Tensor *d = &t->dl_tensor;
    if (t->version.major != DL13_MAJOR_VERSION) {
        snprintf(err, (size_t) errlen, "major version %u", t->version.major);
        return -1;
    }
    if (t->deleter == NULL) {
        snprintf(err, (size_t) errlen, "deleter is NULL");
        return -1;
    }
    if (d->dtype.code != code || d->dtype.bits != bits || d->dtype.lanes != lanes || d->ndim != ndim) {
        snprintf(err, (size_t) errlen, "dtype (%d, %d, %d) ndim %d, asked for (%d, %d, %d) ndim %d", d->dtype.code,
                 d->dtype.bits, d->dtype.lanes, d->ndim, code, bits, lanes, ndim);
        return -1;
    }
    if (ndim > 0 && (d->shape == NULL || d->strides == NULL)) {
        snprintf(err, (size_t) errlen, "shape %p strides %p: DLPack 1.2 requires both", (void *) d->shape,
                 (void *) d->strides);
        return -1;
    }
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (d->shape[i] != shape[i]) {
            snprintf(err, (size_t) errlen, "shape[%d] %lld, asked for %lld", i, (long long) d->shape[i],
                     (long long) shape[i]);
            return -1;
        }
        count *= shape[i];
    }
    int padded = (t->flags & DL13_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
    int64_t item = padded ? 1 : (d->dtype.bits * d->dtype.lanes + 7) / 8;
    int64_t expect = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (d->strides[i] != expect && shape[i] > 1) {
            snprintf(err, (size_t) errlen, "strides[%d] %lld, C order needs %lld", i, (long long) d->strides[i],
                     (long long) expect);
            return -1;
        }
        expect *= shape[i];
    }
    int64_t bytes = count * item;
    if (count > 0 && d->data == NULL) {
        snprintf(err, (size_t) errlen, "data is NULL for %lld element(s)", (long long) count);
        return -1;
    }
    unsigned char *p = (unsigned char *) d->data + d->byte_offset;
    for (int64_t k = 0; k < bytes; k++) {
        p[k] = (unsigned char) (k * 7 + 3);
    }
    int64_t checked = 0;
    for (int64_t k = 0; k < bytes; k++) {
        if (p[k] != (unsigned char) (k * 7 + 3)) {
            snprintf(err, (size_t) errlen, "byte %lld reads back wrong", (long long) k);
            return -1;
        }
        checked++;
    }
    r[0] = t->version.major;
    r[1] = t->version.minor;
    r[2] = (int64_t) t->flags;
    r[3] = d->device.device_type;
    r[4] = d->device.device_id;
    r[5] = (int64_t) (intptr_t) d->data;
    r[6] = bytes;
    r[7] = checked;
    return 0;
}

static void *delete_on_thread(void *arg) {
    dl13_ManagedTensorVersioned *t = (dl13_ManagedTensorVersioned *) arg;
    t->deleter(t);
    return NULL;
}

/* Frees a tensor through its deleter: here, or on a new native thread (joined). */
int free_tensor(dl13_ManagedTensorVersioned *t, int32_t new_thread) {
    if (!new_thread) {
        t->deleter(t);
        return 0;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, delete_on_thread, t) != 0) {
        return -1;
    }
    return pthread_join(thread, NULL);
}

/* Allocates, fills and frees n tensors of float32[rows, cols] from n native threads at once. */
typedef struct {
    dl13_ManagedTensorAllocator alloc;
    int64_t shape[2];
    int ok;
} worker_arg;

static void *worker(void *arg) {
    worker_arg *w = (worker_arg *) arg;
    char err[512];
    int64_t r[8];
    for (int i = 0; i < 50; i++) {
        dl13_ManagedTensorVersioned *t = allocate_like(w->alloc, dl13_kDLCPU, 0, dl13_kDLFloat, 32, 1, 2, w->shape,
                                                       err, sizeof err);
        if (t == NULL || check_and_fill(t, dl13_kDLFloat, 32, 1, 2, w->shape, r, err, sizeof err) != 0) {
            return NULL;
        }
        t->deleter(t);
    }
    w->ok = 1;
    return NULL;
}

int allocate_on_threads(dl13_ManagedTensorAllocator alloc, int32_t threads) {
    pthread_t t[16];
    worker_arg a[16];
    if (threads > 16) {
        return -1;
    }
    for (int i = 0; i < threads; i++) {
        a[i].alloc = alloc;
        a[i].shape[0] = 3 + i;
        a[i].shape[1] = 5;
        a[i].ok = 0;
        if (pthread_create(&t[i], NULL, worker, &a[i]) != 0) {
            return -1;
        }
    }
    int ok = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        ok += a[i].ok;
    }
    return ok;
}
