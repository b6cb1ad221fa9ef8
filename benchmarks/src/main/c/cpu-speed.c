/*
 * Whether this machine's CPUs run equally fast: the same loop of independent integer operations
 * (eight interleaved add/xor chains, 4 x 10^8 iterations), pinned to each CPU the process may run on,
 * alone (no argument) or on every CPU at once (any argument). Prints ns per iteration per CPU.
 * Built by the benchmarks' bench profile (target/native/cpu-speed) and by scripts/cpu-speed; the
 * suite runs it before and after its stages (see docs/decisions.md, "Benchmarks run pinned").
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERATIONS 400000000L

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile uint64_t sink;
static double result[CPU_SETSIZE];

static void *run(void *arg) {
    int cpu = (int) (intptr_t) arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "cpu-speed: cannot pin a thread to CPU %d\n", cpu);
        exit(1);
    }
    uint64_t a = 1 + cpu, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
    double t0 = now();
    for (long i = 0; i < ITERATIONS; i++) {
        a += i; b ^= a; c += b >> 3; d ^= c + i; e += d; f ^= e >> 5; g += f; h ^= g + a;
        __asm__ volatile("" : : "r"(h));
    }
    result[cpu] = (now() - t0) / ITERATIONS * 1e9;
    sink = a + b + c + d + e + f + g + h;
    return NULL;
}

int main(int argc, char **argv) {
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    int cpus[CPU_SETSIZE], n = 0;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        if (CPU_ISSET(i, &allowed)) {
            cpus[n++] = i;
        }
    }
    int together = argc > 1;
    pthread_t threads[CPU_SETSIZE];
    for (int i = 0; i < n; i++) {
        pthread_create(&threads[i], NULL, run, (void *) (intptr_t) cpus[i]);
        if (!together) {
            pthread_join(threads[i], NULL);
        }
    }
    if (together) {
        for (int i = 0; i < n; i++) {
            pthread_join(threads[i], NULL);
        }
    }
    printf("%s", together ? "all CPUs at once:" : "each CPU alone:  ");
    for (int i = 0; i < n; i++) {
        printf("  CPU %d %.3f", cpus[i], result[cpus[i]]);
    }
    printf("  (ns per iteration)\n");
    return 0;
}
