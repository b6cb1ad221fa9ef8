/*
 * NEP 49's sample handler ("Sample code" in the NEP; NumPy's test_mem_policy.py has the same):
 * each block gets a 64-byte header in front of it recording "originally allocated N", which free
 * checks against its size argument. Built by ImportedHandlerTest and ShiftAllocConformanceTest, and
 * imported through datamem's PyDataMem.importHandler.
 *
 * The struct is declared here exactly as numpy/ndarraytypes.h declares it, so that gcc alone
 * builds this file. Departures from the NEP's text, each a defect of the sample:
 *  - the sample prints "uh-oh" and, on a foreign free, calls free on a wrong address to crash the
 *    process on purpose; here every violation is counted (shift_violations) and its message kept
 *    (shift_last_violation), and a foreign pointer is never passed to libc;
 *  - shift_zero records nelem as the size, right only when elsize is 1 (as NumPy calls it); here it
 *    records nelem * elsize, checked for overflow;
 *  - shift_realloc keeps the old header after resizing and adds 64 to a NULL result; here it
 *    records the new size and returns NULL on failure;
 *  - "%ld" with an unsigned long argument: "%zu" here.
 * Live blocks and bytes are counted (shift_live_blocks, shift_live_bytes) for leak checks.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    void *ctx;
    void* (*malloc) (void *ctx, size_t size);
    void* (*calloc) (void *ctx, size_t nelem, size_t elsize);
    void* (*realloc) (void *ctx, void *ptr, size_t new_size);
    void (*free) (void *ctx, void *ptr, size_t size);
} PyDataMemAllocator;

typedef struct {
    char name[127];  /* multiple of 64 to keep the struct aligned */
    uint8_t version; /* currently 1 */
    PyDataMemAllocator allocator;
} PyDataMem_Handler;

typedef struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
} Allocator;

#define HEADER 64
#define PREFIX "originally allocated"

static atomic_long violations;
static atomic_long live_blocks;
static atomic_long live_bytes;
static char last_violation[256];

static void violation(const char *what, size_t a, size_t b) {
    atomic_fetch_add(&violations, 1);
    snprintf(last_violation, sizeof last_violation, "uh-oh, %s (%zu, %zu)", what, a, b);
}

static void *stamp(char *real, size_t sz, const char *how) {
    if (real == NULL) {
        return NULL;
    }
    memset(real, 0, HEADER);
    snprintf(real, HEADER, PREFIX " %zu%s", sz, how);
    atomic_fetch_add(&live_blocks, 1);
    atomic_fetch_add(&live_bytes, (long) sz);
    return (void *)(real + HEADER);
}

/* The size in a live block's header, or -1 when it has no header of ours. */
static long recorded(const char *real) {
    if (strncmp(real, PREFIX, 20) != 0) {
        return -1;
    }
    return atol(real + 20);
}

static void *shift_alloc(void *ctx, size_t sz) {
    Allocator *alloc = (Allocator *) ctx;
    if (sz > SIZE_MAX - HEADER) {
        return NULL;
    }
    return stamp((char *) alloc->malloc(sz + HEADER), sz, "");
}

static void *shift_zero(void *ctx, size_t nelem, size_t elsize) {
    Allocator *alloc = (Allocator *) ctx;
    if (elsize != 0 && nelem > (SIZE_MAX - HEADER) / elsize) {
        return NULL;
    }
    size_t sz = nelem * elsize;
    return stamp((char *) alloc->calloc(sz + HEADER, 1), sz, " via zero");
}

static void shift_free(void *ctx, void *p, size_t sz) {
    Allocator *alloc = (Allocator *) ctx;
    if (p == NULL) {
        return;
    }
    char *real = (char *) p - HEADER;
    long i = recorded(real);
    if (i < 0) {
        violation("unmatched shift_free, no appropriate prefix", (size_t) p, sz);
        return; /* the sample crashes here on purpose; we leak instead */
    }
    if ((size_t) i != sz) {
        violation("unmatched shift_free(ptr, sz) but allocated", sz, (size_t) i);
    }
    memset(real, 0, HEADER); /* a stale pointer is not taken for a live block */
    atomic_fetch_sub(&live_blocks, 1);
    atomic_fetch_sub(&live_bytes, i);
    alloc->free(real);
}

static void *shift_realloc(void *ctx, void *p, size_t sz) {
    Allocator *alloc = (Allocator *) ctx;
    if (sz > SIZE_MAX - HEADER) {
        return NULL;
    }
    if (p == NULL) {
        return stamp((char *) alloc->realloc(NULL, sz + HEADER), sz, "  via realloc");
    }
    char *real = (char *) p - HEADER;
    long i = recorded(real);
    if (i < 0) {
        violation("unmatched shift_realloc", (size_t) p, sz);
        return NULL;
    }
    char *moved = (char *) alloc->realloc(real, sz + HEADER);
    if (moved == NULL) {
        return NULL; /* the block is untouched */
    }
    atomic_fetch_sub(&live_blocks, 1);
    atomic_fetch_sub(&live_bytes, i);
    return stamp(moved, sz, "  via realloc");
}

static Allocator new_handler_ctx = {
    malloc,
    calloc,
    realloc,
    free
};

PyDataMem_Handler new_handler = {
    "secret_data_allocator",
    1,
    {
        &new_handler_ctx,
        shift_alloc,      /* malloc */
        shift_zero,       /* calloc */
        shift_realloc,    /* realloc */
        shift_free        /* free */
    }
};

long shift_violations(void) { return atomic_load(&violations); }
long shift_live_blocks(void) { return atomic_load(&live_blocks); }
long shift_live_bytes(void) { return atomic_load(&live_bytes); }
const char *shift_last_violation(void) { return last_violation; }
void shift_reset(void) {
    atomic_store(&violations, 0);
    last_violation[0] = '\0';
}
