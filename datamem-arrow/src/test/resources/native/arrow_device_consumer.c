/*
 * A consumer of the Arrow C Device Data Interface written from the specification alone (the
 * struct declarations below are the specification's), for datamem-arrow's tests: it checks an
 * ArrowSchema and an ArrowDeviceArray, reads the values of CPU arrays, and calls the release
 * callbacks, on its own thread or on a new one.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ARROW_FLAG_NULLABLE 2

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

typedef int32_t ArrowDeviceType;
#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2

struct ArrowDeviceArray {
    struct ArrowArray array;
    int64_t device_id;
    ArrowDeviceType device_type;
    void *sync_event;
    int64_t reserved[3];
};

/* Sizes and offsets, for the Java side to compare with its layouts. */
int64_t layout(int what) {
    switch (what) {
        case 0: return (int64_t) sizeof(struct ArrowSchema);
        case 1: return (int64_t) sizeof(struct ArrowArray);
        case 2: return (int64_t) sizeof(struct ArrowDeviceArray);
        case 3: return (int64_t) offsetof(struct ArrowSchema, release);
        case 4: return (int64_t) offsetof(struct ArrowArray, release);
        case 5: return (int64_t) offsetof(struct ArrowDeviceArray, device_id);
        case 6: return (int64_t) offsetof(struct ArrowDeviceArray, device_type);
        case 7: return (int64_t) offsetof(struct ArrowDeviceArray, sync_event);
        case 8: return (int64_t) offsetof(struct ArrowDeviceArray, reserved);
        default: return -1;
    }
}

struct release_job {
    struct ArrowSchema schema;
    struct ArrowDeviceArray array;
};

static void release_all(struct ArrowSchema *schema, struct ArrowDeviceArray *array) {
    if (array->array.release != NULL) {
        array->array.release(&array->array);
    }
    if (schema->release != NULL) {
        schema->release(schema);
    }
}

static void *release_thread(void *arg) {
    struct release_job *job = arg;
    release_all(&job->schema, &job->array);
    return NULL;
}

static int fail(char *err, int errlen, const char *message) {
    snprintf(err, (size_t) errlen, "%s", message);
    return -1;
}

static double element(const char *format, const void *data, int64_t i) {
    switch (format[0]) {
        case 'c': return ((const int8_t *) data)[i];
        case 'C': return ((const uint8_t *) data)[i];
        case 's': return ((const int16_t *) data)[i];
        case 'S': return ((const uint16_t *) data)[i];
        case 'i': return ((const int32_t *) data)[i];
        case 'I': return ((const uint32_t *) data)[i];
        case 'l': return (double) ((const int64_t *) data)[i];
        case 'L': return (double) ((const uint64_t *) data)[i];
        case 'f': return ((const float *) data)[i];
        case 'g': return ((const double *) data)[i];
        default: return 0;
    }
}

/*
 * Reads a schema and a device array the caller lends (the structs are moved here first, as a
 * consumer may, and the caller's marked released), and releases them: mode 0 here, mode 1 on a
 * new thread, joined. Writes the device, the length of the values read and their sum; returns
 * 0, or -1 with a message.
 */
int consume(struct ArrowSchema *schema_in, struct ArrowDeviceArray *array_in, int mode, int64_t *device,
            int64_t *values, double *sum, char *err, int errlen) {
    struct release_job job;
    memcpy(&job.schema, schema_in, sizeof job.schema);
    memcpy(&job.array, array_in, sizeof job.array);
    schema_in->release = NULL;
    array_in->array.release = NULL;

    struct ArrowSchema *schema = &job.schema;
    struct ArrowDeviceArray *array = &job.array;
    int rc = 0;
    *sum = 0;
    *values = 0;
    device[0] = array->device_type;
    device[1] = array->device_id;
    if (schema->release == NULL || array->array.release == NULL) {
        rc = fail(err, errlen, "a released struct");
    } else if (array->reserved[0] != 0 || array->reserved[1] != 0 || array->reserved[2] != 0) {
        rc = fail(err, errlen, "reserved fields are not zero");
    } else if (array->array.null_count != 0) {
        rc = fail(err, errlen, "nulls");
    } else {
        const char *format = schema->format;
        const struct ArrowArray *values_array = &array->array;
        int64_t count = array->array.length;
        int64_t first = array->array.offset;
        if (strncmp(format, "+w:", 3) == 0) {
            long list = 0;
            sscanf(format + 3, "%ld", &list);
            if (schema->n_children != 1 || array->array.n_children != 1 || array->array.n_buffers != 1) {
                rc = fail(err, errlen, "a FixedSizeList needs one child and one buffer");
            } else {
                format = schema->children[0]->format;
                values_array = array->array.children[0];
                count = array->array.length * list;
                first = values_array->offset + array->array.offset * list;
                if (values_array->length < count) {
                    rc = fail(err, errlen, "the child is too short");
                }
            }
        }
        if (rc == 0 && values_array->n_buffers != 2) {
            rc = fail(err, errlen, "a primitive array has two buffers");
        }
        if (rc == 0) {
            *values = count;
            if (array->device_type == ARROW_DEVICE_CPU && array->sync_event == NULL) {
                const void *data = values_array->buffers[1];
                for (int64_t i = 0; i < count; i++) {
                    *sum += element(format, data, first + i);
                }
            }
        }
    }
    if (mode == 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, release_thread, &job) != 0) {
            release_all(schema, array);
        } else {
            pthread_join(t, NULL);
        }
    } else {
        release_all(schema, array);
    }
    if (schema->release != NULL || array->array.release != NULL) {
        return fail(err, errlen, "release did not mark the structs released");
    }
    return rc;
}
