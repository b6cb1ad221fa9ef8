/*
 * A C consumer of an exported PyDataMem_Handler, as NumPy uses one: it reads the function
 * pointers and ctx from the struct at each call and calls them from threads of its own, which the
 * JVM has never seen (ExportedHandlerTest). The struct is declared as numpy/ndarraytypes.h does.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    void *ctx;
    void* (*malloc) (void *ctx, size_t size);
    void* (*calloc) (void *ctx, size_t nelem, size_t elsize);
    void* (*realloc) (void *ctx, void *ptr, size_t new_size);
    void (*free) (void *ctx, void *ptr, size_t size);
} PyDataMemAllocator;

typedef struct {
    char name[127];
    uint8_t version;
    PyDataMemAllocator allocator;
} PyDataMem_Handler;

typedef struct {
    PyDataMem_Handler *handler;
    int iterations;
    int seed;
    long errors;
} Work;

static void *work(void *arg) {
    Work *w = (Work *) arg;
    PyDataMemAllocator *a = &w->handler->allocator;
    unsigned int r = (unsigned int) w->seed * 2654435761u + 1;
    for (int i = 0; i < w->iterations; i++) {
        r = r * 1103515245u + 12345u;
        size_t size = 1 + (r >> 8) % 5000;
        unsigned char mark = (unsigned char) (w->seed + i);
        unsigned char *p = (i & 1) ? a->calloc(a->ctx, size, 1) : a->malloc(a->ctx, size);
        if (p == NULL) {
            w->errors++;
            continue;
        }
        if ((i & 1) && (p[0] != 0 || p[size - 1] != 0)) {
            w->errors++;
        }
        p[0] = mark;
        p[size - 1] = mark;
        size_t grown = size * 2 + 7;
        unsigned char *q = a->realloc(a->ctx, p, grown);
        if (q == NULL) {
            w->errors++;
            a->free(a->ctx, p, size);
            continue;
        }
        if (q[0] != mark || q[size - 1] != mark) {
            w->errors++;
        }
        q[grown - 1] = mark;
        a->free(a->ctx, q, grown);
    }
    return NULL;
}

/* Runs `threads` native threads of `iterations` malloc/calloc, realloc, free each; returns the
   number of failures seen (NULL results, lost data), or -1 if a thread could not start. */
long drive_threads(PyDataMem_Handler *handler, int threads, int iterations) {
    pthread_t ids[64];
    Work works[64];
    if (threads > 64) {
        threads = 64;
    }
    for (int t = 0; t < threads; t++) {
        works[t] = (Work) {handler, iterations, t, 0};
        if (pthread_create(&ids[t], NULL, work, &works[t]) != 0) {
            return -1;
        }
    }
    long errors = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        errors += works[t].errors;
    }
    return errors;
}

/* One free from a native thread, for the hostile-free tests. */
typedef struct {
    PyDataMem_Handler *handler;
    void *ptr;
    size_t size;
} FreeCall;

static void *free_call(void *arg) {
    FreeCall *c = (FreeCall *) arg;
    c->handler->allocator.free(c->handler->allocator.ctx, c->ptr, c->size);
    return NULL;
}

int free_on_native_thread(PyDataMem_Handler *handler, void *ptr, size_t size) {
    pthread_t id;
    FreeCall call = {handler, ptr, size};
    if (pthread_create(&id, NULL, free_call, &call) != 0) {
        return -1;
    }
    return pthread_join(id, NULL);
}
