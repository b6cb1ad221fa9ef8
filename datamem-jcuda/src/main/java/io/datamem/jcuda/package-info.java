/**
 * datamem memory for code that uses JCuda, and JCuda's memory for datamem, without copying.
 *
 * <pre>{@code
 * DataMemHandler gpu = DataMem.handler("cuda:device=0");
 * try (NDArray x = DataMem.callWith(gpu, () -> NDArray.zeros(DType.FLOAT32, n));
 *      JCudaPointer p = JCudaPointer.of(x)) {        // x cannot be closed or resized until p is
 *     cuLaunchKernel(kernel, blocks, 1, 1, 256, 1, 1, 0, null,
 *             Pointer.to(Pointer.to(p.devicePointer()), Pointer.to(new int[] {n})), null);
 *     cuCtxSynchronize();
 * }
 * NDArray y = JCudaArrays.fromCuMemAlloc(devicePointer, byteSize, DType.FLOAT32, n);  // y.close(): cuMemFree
 * }</pre>
 *
 * <p>JCuda's kernels and datamem's {@code cuda:*} handlers share the device's primary context:
 * make it current in JCuda ({@code cuDevicePrimaryCtxRetain}, {@code cuCtxSetCurrent}) before
 * using datamem's device memory there.
 *
 * <p>Arguments are never null (a {@link java.lang.NullPointerException} otherwise). Every method is
 * thread-safe; a {@link io.datamem.jcuda.JCudaPointer} may be closed from any thread.
 */
package io.datamem.jcuda;
