/*
 * Reads datamem's native Py_buffer through CPython's own header (Debian's python3-dev) and
 * CPython's own buffer functions (libpython), so the layout is proven by the compiler, not
 * asserted by us.
 */
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The extended buffer protocol draft's struct: Py_buffer followed by its fields. */
typedef struct {
    Py_buffer view;
    int flags;
    int ext_flags;
    char *device;
    void *device_info;
} datamem_py_buffer_ext;

/* sizeof and offsetof, in a fixed order the Java test knows. */
int probe_layout(int64_t *out, int capacity) {
    int64_t v[] = {
        (int64_t) sizeof(Py_buffer),
        (int64_t) offsetof(Py_buffer, buf),
        (int64_t) offsetof(Py_buffer, obj),
        (int64_t) offsetof(Py_buffer, len),
        (int64_t) offsetof(Py_buffer, itemsize),
        (int64_t) offsetof(Py_buffer, readonly),
        (int64_t) offsetof(Py_buffer, ndim),
        (int64_t) offsetof(Py_buffer, format),
        (int64_t) offsetof(Py_buffer, shape),
        (int64_t) offsetof(Py_buffer, strides),
        (int64_t) offsetof(Py_buffer, suboffsets),
        (int64_t) offsetof(Py_buffer, internal),
        (int64_t) sizeof(datamem_py_buffer_ext),
        (int64_t) offsetof(datamem_py_buffer_ext, flags),
        (int64_t) offsetof(datamem_py_buffer_ext, ext_flags),
        (int64_t) offsetof(datamem_py_buffer_ext, device),
        (int64_t) offsetof(datamem_py_buffer_ext, device_info),
        (int64_t) sizeof(((Py_buffer *) 0)->readonly),
        (int64_t) sizeof(((Py_buffer *) 0)->ndim),
        (int64_t) sizeof(Py_ssize_t),
    };
    int n = (int) (sizeof v / sizeof v[0]);
    if (n > capacity) {
        return -1;
    }
    memcpy(out, v, sizeof v);
    return n;
}

/* CPython's PyBUF_* values, in a fixed order. */
int probe_flags(int64_t *out, int capacity) {
    int64_t v[] = {
        PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_WRITEABLE, PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES,
        PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS, PyBUF_INDIRECT,
        PyBUF_CONTIG, PyBUF_CONTIG_RO, PyBUF_STRIDED, PyBUF_STRIDED_RO, PyBUF_RECORDS,
        PyBUF_RECORDS_RO, PyBUF_FULL, PyBUF_FULL_RO, PyBUF_READ, PyBUF_WRITE,
    };
    int n = (int) (sizeof v / sizeof v[0]);
    if (n > capacity) {
        return -1;
    }
    memcpy(out, v, sizeof v);
    return n;
}

/* Every field, read by name. */
void read_fields(const datamem_py_buffer_ext *b, int64_t *out) {
    out[0] = (int64_t) (intptr_t) b->view.buf;
    out[1] = (int64_t) (intptr_t) b->view.obj;
    out[2] = (int64_t) b->view.len;
    out[3] = (int64_t) b->view.itemsize;
    out[4] = (int64_t) b->view.readonly;
    out[5] = (int64_t) b->view.ndim;
    out[6] = (int64_t) (intptr_t) b->view.format;
    out[7] = (int64_t) (intptr_t) b->view.shape;
    out[8] = (int64_t) (intptr_t) b->view.strides;
    out[9] = (int64_t) (intptr_t) b->view.suboffsets;
    out[10] = (int64_t) (intptr_t) b->view.internal;
    out[11] = (int64_t) b->flags;
    out[12] = (int64_t) b->ext_flags;
    out[13] = (int64_t) (intptr_t) b->device;
    out[14] = (int64_t) (intptr_t) b->device_info;
}

int format_equals(const Py_buffer *view, const char *expected) {
    if (view->format == NULL || expected == NULL) {
        return view->format == expected;
    }
    return strcmp(view->format, expected) == 0;
}

/* CPython's own contiguity check ('C', 'F' or 'A'). */
int is_contiguous(const Py_buffer *view, char order) {
    return PyBuffer_IsContiguous(view, order);
}

/*
 * Sums the elements of an int32 or float64 buffer, visiting every index in C order and locating
 * each element with CPython's PyBuffer_GetPointer (shape, strides, suboffsets as CPython reads
 * them; it needs strides, so C order is computed here when they are NULL). Returns the number of
 * elements visited through *count.
 */
double sum_elements(const Py_buffer *view, int64_t *count) {
    Py_ssize_t index[64];
    double sum = 0;
    *count = 0;
    int ndim = view->ndim;
    if (view->shape == NULL) {
        /* no ND: flat bytes; treat as C-contiguous items of itemsize */
        Py_ssize_t n = view->len / view->itemsize;
        for (Py_ssize_t i = 0; i < n; i++) {
            const char *p = (const char *) view->buf + i * view->itemsize;
            sum += view->itemsize == 4 ? (double) *(const int32_t *) p : *(const double *) p;
            (*count)++;
        }
        return sum;
    }
    for (int d = 0; d < ndim; d++) {
        if (view->shape[d] == 0) {
            return 0;
        }
        index[d] = 0;
    }
    for (;;) {
        const char *p;
        if (view->strides != NULL) {
            p = (const char *) PyBuffer_GetPointer(view, index);
        } else {
            /* PyBuffer_GetPointer needs strides; without them the buffer is C-contiguous */
            Py_ssize_t linear = 0;
            for (int d = 0; d < ndim; d++) {
                linear = linear * view->shape[d] + index[d];
            }
            p = (const char *) view->buf + linear * view->itemsize;
        }
        sum += view->itemsize == 4 ? (double) *(const int32_t *) p : *(const double *) p;
        (*count)++;
        int d = ndim - 1;
        while (d >= 0 && ++index[d] == view->shape[d]) {
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return sum;
        }
    }
}

/* The draft's consumer rule: check flags before the device fields. */
const char *device_of(const datamem_py_buffer_ext *b, int requested_flags, int device_flag) {
    if ((requested_flags & device_flag) == 0 || (b->flags & device_flag) == 0) {
        return "<cpu: no device fields>";
    }
    return b->device == NULL ? "<cpu>" : b->device;
}

/* datamem_device_info_v1, read by a C consumer. */
typedef struct {
    uint32_t version;
    uint32_t byte_size;
    int32_t device_type;
    int32_t device_id;
    uint32_t memory_kind;
    uint32_t reserved;
    uint64_t stream;
    uint64_t context;
    uint64_t device_handle;
} datamem_device_info_v1;

void read_device_info(const datamem_py_buffer_ext *b, int64_t *out) {
    const datamem_device_info_v1 *i = (const datamem_device_info_v1 *) b->device_info;
    out[0] = i->version;
    out[1] = i->byte_size;
    out[2] = i->device_type;
    out[3] = i->device_id;
    out[4] = i->memory_kind;
    out[5] = (int64_t) i->stream;
    out[6] = (int64_t) i->context;
    out[7] = (int64_t) i->device_handle;
    out[8] = (int64_t) sizeof(datamem_device_info_v1);
}

/*
 * A C exporter: fills a caller's extended Py_buffer over its own static data, as a bf_getbuffer
 * would (for the Java side's fromNative).
 */
static double c_data[6] = {1, 2, 3, 4, 5, 6};
static Py_ssize_t c_shape[2] = {3, 2};
static Py_ssize_t c_strides[2] = {8, 24};
static char c_device_info[16] = {1, 0, 0, 0};

void export_from_c(datamem_py_buffer_ext *b, int flags, int device_flag) {
    b->view.buf = c_data;
    b->view.obj = NULL;
    b->view.len = sizeof c_data;
    b->view.itemsize = sizeof(double);
    b->view.readonly = 1;
    b->view.ndim = 2;
    b->view.format = "d";
    b->view.shape = c_shape;
    b->view.strides = c_strides;
    b->view.suboffsets = NULL;
    b->view.internal = NULL;
    if (flags & device_flag) {
        b->flags = device_flag;
        b->ext_flags = 0;
        b->device = "org.example.accelerator";
        b->device_info = c_device_info;
    }
}
