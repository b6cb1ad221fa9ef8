/**
 * The handler contract: NEP 49's data-memory handlers for the JVM.
 *
 * <p>{@link io.datamem.DataMemAllocator} is the allocator (malloc, calloc, realloc with the old
 * size, sized free, traits); {@link io.datamem.DataMemHandler} names and versions one;
 * {@link io.datamem.DataMem} says which handler allocates now, through a {@link ScopedValue}
 * binding or the process default.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so; passing null
 * elsewhere throws {@link NullPointerException}. Threading: every type here is immutable or
 * thread-safe.
 *
 * <p>Errors: caller mistakes are JDK exceptions with a message of the form
 * {@code "byteAlignment: 3 (expected: a power of two)"}; runtime failures are
 * {@link io.datamem.AllocationException}s naming the handler and the byte count.
 */
package io.datamem;
