/*
 * The C baseline of datamem's allocation benchmarks: glibc malloc and free in a loop, called once
 * per benchmark invocation through FFM (the call's cost is spread over the whole loop).
 */
#include <stdint.h>
#include <stdlib.h>

/* Makes the compiler believe the pointer escapes, so that it keeps the malloc/free pair. */
static inline void escape(void *p) {
    __asm__ volatile("" : : "r"(p) : "memory");
}

/*
 * Allocates and frees a block of byte_size bytes, iterations times. Returns the number of
 * allocations that failed (0 normally).
 */
int64_t dm_bench_malloc_free(int64_t byte_size, int64_t iterations) {
    int64_t failures = 0;
    for (int64_t i = 0; i < iterations; i++) {
        void *p = malloc((size_t) byte_size);
        if (p == NULL) {
            failures++;
        }
        escape(p);
        free(p);
    }
    return failures;
}

/* An empty function: the cost of the FFM call itself. */
int64_t dm_bench_nothing(int64_t a, int64_t b) {
    return a + b;
}

/*
 * Replays a mixed-size trace: window allocations fill a window of live blocks, then each of steps
 * steps frees the live block in slot slots[k] and allocates sizes[window + k] bytes in its place; at
 * the end every live block is freed. sizes has window + steps entries; live is scratch space for
 * window pointers. touch: 0 leaves blocks untouched, 1 writes their first byte, 2 writes one byte
 * in every 4 KiB of them and their last byte (so that all their pages are resident, as in an
 * application using them). Returns the allocations that failed.
 */
int64_t dm_bench_trace(const int64_t *sizes, const int32_t *slots, int64_t window, int64_t steps, void **live,
                       int32_t touch) {
    int64_t failures = 0;
    for (int64_t i = 0; i < window + steps; i++) {
        int64_t slot;
        if (i < window) {
            slot = i;
        } else {
            slot = slots[i - window];
            free(live[slot]);
        }
        size_t n = (size_t) sizes[i];
        char *p = malloc(n);
        if (p == NULL) {
            failures++;
        } else if (touch == 1) {
            p[0] = (char) i;
        } else if (touch == 2) {
            for (size_t o = 0; o < n; o += 4096) {
                p[o] = (char) i;
            }
            p[n - 1] = (char) i;
        }
        escape(p);
        live[slot] = p;
    }
    for (int64_t s = 0; s < window; s++) {
        free(live[s]);
        live[s] = NULL;
    }
    return failures;
}
