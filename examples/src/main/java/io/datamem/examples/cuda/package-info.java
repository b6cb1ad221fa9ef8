/**
 * CUDA examples: {@link io.datamem.examples.cuda.PinnedStaging} moves a data set to the GPU and
 * back through a pool of pinned staging buffers and prints the bandwidth.
 */
package io.datamem.examples.cuda;
