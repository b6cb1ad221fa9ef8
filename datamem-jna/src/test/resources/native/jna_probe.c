/*
 * A native library as a datamem user binds one with JNA: functions that read and write the
 * caller's memory in place, and a buffer of its own with its free function. JnaBridgeTest compiles
 * it at test time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static int buffers_freed;

/* Adds 1 to each of the n doubles at values, in place; returns their sum before. */
double jna_probe_add_one(double *values, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += values[i];
        values[i] += 1.0;
    }
    return sum;
}

/* The address the function was given: the same as the caller's memory, or a copy was made. */
uintptr_t jna_probe_address_of(const void *p) {
    return (uintptr_t) p;
}

/* A buffer of the library's own: n int64 values i * i, malloc'd; NULL if malloc fails. */
int64_t *jna_probe_buffer_new(size_t n) {
    int64_t *p = malloc(n * sizeof(int64_t));
    if (p != NULL) {
        for (size_t i = 0; i < n; i++) {
            p[i] = (int64_t) (i * i);
        }
    }
    return p;
}

/* Frees a buffer of jna_probe_buffer_new and counts it. */
void jna_probe_buffer_free(int64_t *p) {
    free(p);
    buffers_freed++;
}

/* How many buffers jna_probe_buffer_free freed. */
int jna_probe_buffers_freed(void) {
    return buffers_freed;
}
