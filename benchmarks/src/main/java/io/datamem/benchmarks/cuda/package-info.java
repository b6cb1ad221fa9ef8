/**
 * CUDA benchmarks: host-to-device and device-to-host bandwidth from pageable, pinned, pooled pinned
 * and registered memory ({@link io.datamem.benchmarks.cuda.CudaTransferBenchmark}), the time to
 * allocate pinned memory with and without a pool
 * ({@link io.datamem.benchmarks.cuda.CudaPinnedAllocationBenchmark}), and a report comparing them
 * with a C program's {@code cudaMemcpy} and with PCIe Gen5 x16
 * ({@link io.datamem.benchmarks.cuda.CudaBandwidthReport}). They need a CUDA GPU; without one their
 * setup fails saying why.
 */
package io.datamem.benchmarks.cuda;
