/*
 * A DLPack consumer and producer compiled at test time against Debian's libdlpack-dev
 * (dlpack/dlpack.h, which declares the legacy structs). DLManagedTensorVersioned, which that header
 * predates, is declared below exactly as DLPack 1.x defines it, around the header's DLTensor.
 */
#include <dlpack/dlpack.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t major;
    uint32_t minor;
} dm_DLPackVersion;

typedef struct dm_DLManagedTensorVersioned {
    dm_DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct dm_DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} dm_DLManagedTensorVersioned;

int probe_layout(int64_t *out) {
    int64_t v[] = {
        (int64_t) sizeof(DLTensor),
        (int64_t) offsetof(DLTensor, data),
        (int64_t) offsetof(DLTensor, device),
        (int64_t) offsetof(DLTensor, ndim),
        (int64_t) offsetof(DLTensor, dtype),
        (int64_t) offsetof(DLTensor, shape),
        (int64_t) offsetof(DLTensor, strides),
        (int64_t) offsetof(DLTensor, byte_offset),
        (int64_t) sizeof(DLManagedTensor),
        (int64_t) offsetof(DLManagedTensor, dl_tensor),
        (int64_t) offsetof(DLManagedTensor, manager_ctx),
        (int64_t) offsetof(DLManagedTensor, deleter),
        (int64_t) sizeof(dm_DLManagedTensorVersioned),
        (int64_t) offsetof(dm_DLManagedTensorVersioned, version),
        (int64_t) offsetof(dm_DLManagedTensorVersioned, manager_ctx),
        (int64_t) offsetof(dm_DLManagedTensorVersioned, deleter),
        (int64_t) offsetof(dm_DLManagedTensorVersioned, flags),
        (int64_t) offsetof(dm_DLManagedTensorVersioned, dl_tensor),
        (int64_t) sizeof(DLDevice),
        (int64_t) offsetof(DLDevice, device_id),
        (int64_t) sizeof(DLDataType),
        (int64_t) offsetof(DLDataType, bits),
        (int64_t) offsetof(DLDataType, lanes),
        kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex,
        kDLOpaqueHandle,
    };
    memcpy(out, v, sizeof v);
    return (int) (sizeof v / sizeof v[0]);
}

/* ---------------------------------------------------------------------------------------------
 * Consumer: checks every element against the pattern the Java side wrote. Element k (in C order
 * of the tensor's shape) holds k converted to the dtype; booleans k % 2; complex k + (k + 0.5)i;
 * float8 (opaque bytes to C) the byte k.
 */

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t) (h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {
            exp = 127 - 15 + 1;
            while ((mant & 0x400) == 0) {
                mant <<= 1;
                exp--;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float bfloat_to_float(uint16_t b) {
    uint32_t bits = (uint32_t) b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int check_element(const DLDataType t, const char *p, int64_t k, char *err, size_t errlen) {
    int ok;
    switch (t.code) {
        case kDLInt:
            switch (t.bits) {
                case 8: ok = *(const int8_t *) p == (int8_t) k; break;
                case 16: ok = *(const int16_t *) p == (int16_t) k; break;
                case 32: ok = *(const int32_t *) p == (int32_t) k; break;
                case 64: ok = *(const int64_t *) p == (int64_t) k; break;
                default: ok = 0;
            }
            break;
        case kDLUInt:
            switch (t.bits) {
                case 8: ok = *(const uint8_t *) p == (uint8_t) k; break;
                case 16: ok = *(const uint16_t *) p == (uint16_t) k; break;
                case 32: ok = *(const uint32_t *) p == (uint32_t) k; break;
                case 64: ok = *(const uint64_t *) p == (uint64_t) k; break;
                default: ok = 0;
            }
            break;
        case kDLFloat:
            switch (t.bits) {
                case 16: ok = half_to_float(*(const uint16_t *) p) == (float) k; break;
                case 32: ok = *(const float *) p == (float) k; break;
                case 64: ok = *(const double *) p == (double) k; break;
                default: ok = 0;
            }
            break;
        case kDLBfloat:
            ok = t.bits == 16 && bfloat_to_float(*(const uint16_t *) p) == (float) k;
            break;
        case kDLComplex:
            if (t.bits == 64) {
                const float *c = (const float *) p;
                ok = c[0] == (float) k && c[1] == (float) k + 0.5f;
            } else {
                const double *c = (const double *) p;
                ok = t.bits == 128 && c[0] == (double) k && c[1] == (double) k + 0.5;
            }
            break;
        case 6: /* kDLBool, DLPack >= 0.8 */
            ok = t.bits == 8 && *(const uint8_t *) p == (uint8_t) (k % 2);
            break;
        default: /* float8 and other byte-sized types: the raw byte */
            ok = t.bits == 8 && *(const uint8_t *) p == (uint8_t) k;
    }
    if (!ok) {
        snprintf(err, errlen, "element %lld (dtype code %d bits %d) holds the wrong value", (long long) k, t.code,
                 t.bits);
    }
    return ok;
}

/* Visits every element of a DLTensor in C order; returns the count, or -1 with err set. */
static int64_t check_tensor(const DLTensor *t, char *err, size_t errlen) {
    if (t->dtype.lanes != 1) {
        snprintf(err, errlen, "lanes %d", t->dtype.lanes);
        return -1;
    }
    int ndim = t->ndim;
    int64_t itemsize = (t->dtype.bits * t->dtype.lanes + 7) / 8;
    int64_t size = 1;
    for (int d = 0; d < ndim; d++) {
        size *= t->shape[d];
    }
    if (size == 0) {
        return 0;
    }
    if (t->data == NULL) {
        snprintf(err, errlen, "data is NULL for %lld elements", (long long) size);
        return -1;
    }
    int64_t strides[64];
    int64_t acc = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = t->strides != NULL ? t->strides[d] : acc;
        acc *= t->shape[d];
    }
    int64_t index[64] = {0};
    const char *base = (const char *) t->data + t->byte_offset;
    for (int64_t k = 0; k < size; k++) {
        int64_t offset = 0;
        for (int d = 0; d < ndim; d++) {
            offset += index[d] * strides[d];
        }
        if (!check_element(t->dtype, base + offset * itemsize, k, err, errlen)) {
            return -1;
        }
        for (int d = ndim - 1; d >= 0; d--) {
            if (++index[d] < t->shape[d]) {
                break;
            }
            index[d] = 0;
        }
    }
    return size;
}

typedef struct {
    void *self;
    int versioned;
} delete_job;

static void *delete_on_thread(void *arg) {
    delete_job *job = (delete_job *) arg;
    if (job->versioned) {
        dm_DLManagedTensorVersioned *t = (dm_DLManagedTensorVersioned *) job->self;
        t->deleter(t);
    } else {
        DLManagedTensor *t = (DLManagedTensor *) job->self;
        t->deleter(t);
    }
    return NULL;
}

static int call_deleter(void *self, int versioned, int mode) {
    if (mode == 0) {
        return 0;
    }
    if (mode == 1) {
        delete_job job = {self, versioned};
        delete_on_thread(&job);
        return 0;
    }
    /* mode 2: from a native thread the JVM has never seen */
    pthread_t thread;
    delete_job job = {self, versioned};
    if (pthread_create(&thread, NULL, delete_on_thread, &job) != 0) {
        return -1;
    }
    return pthread_join(thread, NULL);
}

/* delete_mode: 0 keep, 1 call the deleter here, 2 call it from a new native thread. */
int64_t consume_legacy(DLManagedTensor *t, int delete_mode, char *err, int errlen) {
    if (t->deleter == NULL) {
        snprintf(err, errlen, "no deleter");
        return -1;
    }
    int64_t n = check_tensor(&t->dl_tensor, err, (size_t) errlen);
    if (call_deleter(t, 0, delete_mode) != 0) {
        snprintf(err, errlen, "pthread failed");
        return -1;
    }
    return n;
}

int64_t consume_versioned(dm_DLManagedTensorVersioned *t, int delete_mode, char *err, int errlen) {
    if (t->version.major != 1) {
        snprintf(err, errlen, "major version %u", t->version.major);
        t->deleter(t); /* required by DLPack for a major mismatch */
        return -1;
    }
    int64_t n = check_tensor(&t->dl_tensor, err, (size_t) errlen);
    if (call_deleter(t, 1, delete_mode) != 0) {
        snprintf(err, errlen, "pthread failed");
        return -1;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Producer: tensors owned by C, whose deleters count their calls.
 */

typedef struct {
    void *block;
    int64_t *shape;
    int64_t *strides;
} producer_ctx;

static int deleter_calls_count;

int deleter_calls(void) {
    return __atomic_load_n(&deleter_calls_count, __ATOMIC_SEQ_CST);
}

void reset_deleter_calls(void) {
    __atomic_store_n(&deleter_calls_count, 0, __ATOMIC_SEQ_CST);
}

static void free_ctx(producer_ctx *ctx) {
    free(ctx->block);
    free(ctx->shape);
    free(ctx->strides);
    free(ctx);
}

static void legacy_deleter(DLManagedTensor *self) {
    __atomic_fetch_add(&deleter_calls_count, 1, __ATOMIC_SEQ_CST);
    free_ctx((producer_ctx *) self->manager_ctx);
    free(self);
}

static void versioned_deleter(dm_DLManagedTensorVersioned *self) {
    __atomic_fetch_add(&deleter_calls_count, 1, __ATOMIC_SEQ_CST);
    free_ctx((producer_ctx *) self->manager_ctx);
    free(self);
}

/*
 * A float64 or int32 tensor (or any dtype, unfilled) whose element k in C order holds k. With
 * numpy_style, data points at element [0, ..., 0] itself (elements with negative strides lie
 * before it) and byte_offset is 0; otherwise data is the allocation and byte_offset reaches
 * element [0, ..., 0].
 */
void *make_tensor(int versioned, int ndim, const int64_t *shape, const int64_t *strides, int code, int bits,
                  int lanes, int device_type, int device_id, uint64_t flags, int null_data, int numpy_style) {
    producer_ctx *ctx = calloc(1, sizeof *ctx);
    ctx->shape = malloc(sizeof(int64_t) * (ndim > 0 ? ndim : 1));
    ctx->strides = strides != NULL ? malloc(sizeof(int64_t) * (ndim > 0 ? ndim : 1)) : NULL;
    int64_t itemsize = (bits * lanes + 7) / 8;
    int64_t lo = 0, hi = 0, size = 1, acc = 1;
    int64_t cstrides[64];
    for (int d = ndim - 1; d >= 0; d--) {
        ctx->shape[d] = shape[d];
        cstrides[d] = strides != NULL ? strides[d] : acc;
        if (strides != NULL) {
            ctx->strides[d] = strides[d];
        }
        acc *= shape[d];
        size *= shape[d];
        int64_t extent = cstrides[d] * (shape[d] - 1);
        if (extent < 0) {
            lo += extent;
        } else {
            hi += extent;
        }
    }
    int64_t span = size == 0 ? 1 : (hi - lo + 1) * itemsize;
    ctx->block = null_data ? NULL : calloc(1, (size_t) span);
    char *element0 = ctx->block == NULL ? NULL : (char *) ctx->block + (-lo) * itemsize;
    if (element0 != NULL && size > 0) {
        int64_t index[64] = {0};
        for (int64_t k = 0; k < size; k++) {
            int64_t offset = 0;
            for (int d = 0; d < ndim; d++) {
                offset += index[d] * cstrides[d];
            }
            char *p = element0 + offset * itemsize;
            if (code == kDLFloat && bits == 64) {
                *(double *) p = (double) k;
            } else if (code == kDLInt && bits == 32) {
                *(int32_t *) p = (int32_t) k;
            }
            for (int d = ndim - 1; d >= 0; d--) {
                if (++index[d] < shape[d]) {
                    break;
                }
                index[d] = 0;
            }
        }
    }
    DLTensor tensor;
    tensor.data = numpy_style ? (void *) element0 : ctx->block;
    tensor.device.device_type = (DLDeviceType) device_type;
    tensor.device.device_id = device_id;
    tensor.ndim = ndim;
    tensor.dtype.code = (uint8_t) code;
    tensor.dtype.bits = (uint8_t) bits;
    tensor.dtype.lanes = (uint16_t) lanes;
    tensor.shape = ctx->shape;
    tensor.strides = ctx->strides;
    tensor.byte_offset = numpy_style || ctx->block == NULL ? 0 : (uint64_t) ((-lo) * itemsize);
    if (versioned) {
        dm_DLManagedTensorVersioned *t = malloc(sizeof *t);
        t->version.major = 1;
        t->version.minor = 1;
        t->manager_ctx = ctx;
        t->deleter = versioned_deleter;
        t->flags = flags;
        t->dl_tensor = tensor;
        return t;
    }
    DLManagedTensor *t = malloc(sizeof *t);
    t->dl_tensor = tensor;
    t->manager_ctx = ctx;
    t->deleter = legacy_deleter;
    return t;
}
