// The C reference for datamem's CUDA transfer benchmark: cudaMemcpy between pinned (cudaMallocHost)
// or pageable (malloc) host memory and device memory, host to device and device to host, for sizes
// from 64 KiB to 1 GiB. Host code only; build with nvcc:
//
//   nvcc -O2 -o cuda_bandwidth cuda_bandwidth.cu
//   ./cuda_bandwidth [device]
//
// Prints one line per measurement: MEMORY DIRECTION BYTES GBPS (GB = 10^9 bytes), the median of
// the repetitions, each timed with CUDA events around a batch of synchronous copies (as
// CudaTransferBenchmark times synchronous copies). Exit status 2 without a usable GPU.

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        cudaError_t rc_ = (call);                                                                \
        if (rc_ != cudaSuccess) {                                                                \
            fprintf(stderr, "cuda_bandwidth: %s failed: %s (%s)\n", #call, cudaGetErrorName(rc_), \
                    cudaGetErrorString(rc_));                                                    \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The median bandwidth in GB/s of REPS batches of copies of `bytes` bytes. */
static double measure(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
    enum { REPS = 9 };
    int batch = bytes >= (64u << 20) ? 2 : bytes >= (4u << 20) ? 8 : 64;
    double gbps[REPS];
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaMemcpy(dst, src, bytes, kind)); /* warm-up */
    for (int r = 0; r < REPS; r++) {
        CHECK(cudaEventRecord(start, 0));
        for (int i = 0; i < batch; i++) {
            CHECK(cudaMemcpy(dst, src, bytes, kind));
        }
        CHECK(cudaEventRecord(stop, 0));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        gbps[r] = (double) bytes * batch / (ms * 1e-3) / 1e9;
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    qsort(gbps, REPS, sizeof gbps[0], compare);
    return gbps[REPS / 2];
}

int main(int argc, char **argv) {
    int device = argc > 1 ? atoi(argv[1]) : 0;
    int count = 0;
    cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0) {
        fprintf(stderr, "cuda_bandwidth: no usable CUDA device: %s\n",
                rc != cudaSuccess ? cudaGetErrorName(rc) : "0 devices");
        return 2;
    }
    CHECK(cudaSetDevice(device));
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    printf("# device %d: %s, PCI %04x:%02x:%02x\n", device, prop.name, prop.pciDomainID, prop.pciBusID,
           prop.pciDeviceID);
    const size_t max = (size_t) 1 << 30;
    void *pinned, *onDevice;
    void *pageable = malloc(max);
    if (pageable == NULL) {
        fprintf(stderr, "cuda_bandwidth: malloc(%zu) failed\n", max);
        return 1;
    }
    memset(pageable, 1, max); /* fault the pages in before timing */
    CHECK(cudaMallocHost(&pinned, max));
    memset(pinned, 1, max);
    CHECK(cudaMalloc(&onDevice, max));
    for (size_t bytes = (size_t) 64 << 10; bytes <= max; bytes *= 4) {
        printf("pinned h2d %zu %.3f\n", bytes, measure(onDevice, pinned, bytes, cudaMemcpyHostToDevice));
        printf("pinned d2h %zu %.3f\n", bytes, measure(pinned, onDevice, bytes, cudaMemcpyDeviceToHost));
        printf("pageable h2d %zu %.3f\n", bytes, measure(onDevice, pageable, bytes, cudaMemcpyHostToDevice));
        printf("pageable d2h %zu %.3f\n", bytes, measure(pageable, onDevice, bytes, cudaMemcpyDeviceToHost));
        fflush(stdout);
    }
    CHECK(cudaFree(onDevice));
    CHECK(cudaFreeHost(pinned));
    free(pageable);
    return 0;
}
