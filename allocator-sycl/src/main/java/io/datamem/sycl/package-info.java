/**
 * SYCL unified shared memory (USM) through OpenCL's {@code cl_intel_unified_shared_memory}:
 * {@link io.datamem.sycl.SyclUsmAllocator} (host, shared and device memory),
 * {@link io.datamem.sycl.SyclQueue} (context, device and queue handles; copy, fill, prefetch,
 * migrate, advise; pointer queries), {@link io.datamem.sycl.SyclSelector} (dpctl filter selector
 * strings), {@link io.datamem.usm.UsmKind}, {@link io.datamem.sycl.UsmPointerInfo} and
 * {@link io.datamem.sycl.SyclDeviceInfo} (the {@code device_info} of exported device buffers).
 *
 * <p>Handler names: {@code sycl:host}, {@code sycl:shared}, {@code sycl:device}, each optionally
 * followed by {@code :} and a filter selector ({@code sycl:device:opencl:gpu:0}); pooled:
 * {@code pool(sycl:device)}.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so
 * ({@link io.datamem.sycl.UsmPointerInfo#device()} is null for host and unknown memory). Threading:
 * every type is immutable or thread-safe, except builders.
 */
package io.datamem.sycl;
