/**
 * CUDA memory for datamem: {@link io.datamem.cuda.CudaPinnedAllocator} (page-locked host memory),
 * {@link io.datamem.cuda.CudaDeviceAllocator} (device memory),
 * {@link io.datamem.cuda.CudaManagedAllocator} (managed memory),
 * {@link io.datamem.cuda.CudaRegisteredAllocator} (any page-aligned host allocator's memory,
 * page-locked); copies between host and device ({@link io.datamem.cuda.CudaMemory}) on
 * {@link io.datamem.cuda.CudaStream}s; and whether CUDA works here ({@link io.datamem.cuda.Cuda}).
 *
 * <p>Handler names: {@code cuda:pinned}, {@code cuda:device=N}, {@code cuda:managed=N},
 * {@code cuda:registered(UPSTREAM)}, and pools of them, {@code pool(cuda:pinned)}. Every allocator's
 * traits carry datamem's CUDA {@link io.datamem.DeviceInterchange}, so arrays on CUDA memory
 * export as buffers (device id {@code io.datamem.cuda}) and DLPack tensors ({@code kDLCUDA},
 * {@code kDLCUDAHost}, {@code kDLCUDAManaged}).
 *
 * <p>Null policy: no method accepts or returns null unless documented. Threading: every class here
 * is thread-safe except the builders.
 */
package io.datamem.cuda;
