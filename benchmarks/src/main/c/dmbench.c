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
