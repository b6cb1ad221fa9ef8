/*
 * The C peers of datamem's allocation benchmarks, run as a process of their own so that another
 * allocator can replace glibc's with LD_PRELOAD (which must not reach the JVM): times the malloc +
 * free pair loop of dmbench.c per block size and the replay of a mixed-size trace, and measures the
 * replay's peak resident memory. Prints one JSON object.
 *
 *   dmbench-pairs TRACE_FILE REPEATS MILLIS SIZE...
 *
 * TRACE_FILE: "DMTRACE1", int64 window, int64 steps, int64 sizes[window + steps], int32
 * slots[steps], little-endian (written by io.datamem.benchmarks.report.Trace). Each timing repeats REPEATS
 * times, each repeat running about MILLIS ms.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t dm_bench_malloc_free(int64_t byte_size, int64_t iterations);
int64_t dm_bench_trace(const int64_t *sizes, const int32_t *slots, int64_t window, int64_t steps, void **live,
                       int32_t touch);

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e9 + (double) t.tv_nsec;
}

/* A field of /proc/self/status in kB, or -1. */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return -1;
    }
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Resets VmHWM to the current RSS (Linux 4.0+); returns whether the kernel accepted it. */
static int reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL) {
        return 0;
    }
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static void fail(const char *what) {
    fprintf(stderr, "dmbench-pairs: %s\n", what);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fail("usage: dmbench-pairs TRACE_FILE REPEATS MILLIS SIZE...");
    }
    int repeats = atoi(argv[2]);
    double millis = atof(argv[3]);
    if (repeats < 1 || millis <= 0) {
        fail("REPEATS and MILLIS must be positive");
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        fail("cannot open the trace file");
    }
    char magic[8];
    int64_t window, steps;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "DMTRACE1", 8) != 0 || fread(&window, 8, 1, f) != 1
        || fread(&steps, 8, 1, f) != 1 || window < 1 || steps < 0) {
        fail("not a trace file");
    }
    int64_t *sizes = malloc((size_t) (window + steps) * sizeof *sizes);
    int32_t *slots = malloc((size_t) (steps > 0 ? steps : 1) * sizeof *slots);
    void **live = calloc((size_t) window, sizeof *live);
    if (sizes == NULL || slots == NULL || live == NULL) {
        fail("out of memory reading the trace");
    }
    if (fread(sizes, 8, (size_t) (window + steps), f) != (size_t) (window + steps)
        || fread(slots, 4, (size_t) steps, f) != (size_t) steps) {
        fail("truncated trace file");
    }
    fclose(f);

    Dl_info info;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    const char *lib = m != NULL && dladdr(m, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : "unknown";
    printf("{\"malloc\": \"%s\"", lib);

    /* Peak RSS first, in a fresh process: replay with every page touched. */
    int reset = reset_peak();
    long base = status_kib("VmRSS");
    int64_t failures = dm_bench_trace(sizes, slots, window, steps, live, 2);
    long peak = status_kib("VmHWM");
    long after = status_kib("VmRSS");
    printf(", \"rss\": {\"reset\": %s, \"baselineKiB\": %ld, \"peakKiB\": %ld, \"afterKiB\": %ld}",
           reset ? "true" : "false", base, peak, after);

    /* The trace replay, blocks' first byte written. */
    int64_t reps = 1;
    double t0 = now_ns();
    failures += dm_bench_trace(sizes, slots, window, steps, live, 1);
    double once = now_ns() - t0;
    reps = (int64_t) (millis * 1e6 / (once > 1 ? once : 1));
    if (reps < 1) {
        reps = 1;
    }
    printf(", \"traceAllocations\": %lld, \"trace\": [", (long long) (window + steps));
    for (int r = 0; r < repeats; r++) {
        double s = now_ns();
        for (int64_t i = 0; i < reps; i++) {
            failures += dm_bench_trace(sizes, slots, window, steps, live, 1);
        }
        printf("%s%.4f", r ? ", " : "", (now_ns() - s) / ((double) reps * (double) (window + steps)));
    }
    printf("], \"pairs\": {");
    for (int a = 4; a < argc; a++) {
        int64_t size = atoll(argv[a]);
        int64_t n = 1000;
        /* calibrate: about millis ms per repeat */
        for (;;) {
            double s = now_ns();
            failures += dm_bench_malloc_free(size, n);
            double d = now_ns() - s;
            if (d > millis * 1e6 / 4 || n > ((int64_t) 1 << 40)) {
                n = (int64_t) ((double) n * millis * 1e6 / (d > 1 ? d : 1));
                break;
            }
            n *= 4;
        }
        if (n < 1) {
            n = 1;
        }
        printf("%s\"%lld\": [", a > 4 ? ", " : "", (long long) size);
        for (int r = 0; r < repeats; r++) {
            double s = now_ns();
            failures += dm_bench_malloc_free(size, n);
            printf("%s%.4f", r ? ", " : "", (now_ns() - s) / (double) n);
        }
        printf("]");
    }
    printf("}, \"failures\": %lld}\n", (long long) failures);
    return failures == 0 ? 0 : 1;
}
