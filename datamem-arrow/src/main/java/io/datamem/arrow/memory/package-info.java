/**
 * Arrow Java allocating through datamem: {@link io.datamem.arrow.memory.HandlerAllocationManager}
 * gives every {@code ArrowBuf} of a {@code RootAllocator} memory from a datamem handler. This
 * package alone needs Arrow Java ({@code org.apache.arrow:arrow-memory-core}).
 *
 * <p>Arguments are never null (a {@link java.lang.NullPointerException} otherwise); factories are
 * thread-safe.
 */
package io.datamem.arrow.memory;
