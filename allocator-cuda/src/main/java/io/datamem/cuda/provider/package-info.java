/**
 * The CUDA backend's {@link io.datamem.spi.DataMemProvider}: the names {@code cuda:pinned},
 * {@code cuda:device}, {@code cuda:managed} and {@code cuda:registered} ({@code CudaTerm} has the
 * grammar), and the hook for memory imported on CUDA devices. On top of the module's packages, as
 * {@code io.datamem.impl.provider} is in {@code allocator-impl}. Not exported.
 */
package io.datamem.cuda.provider;
