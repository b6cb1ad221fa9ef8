/**
 * The implementation of {@code io.datamem.numpy}: the struct layout ({@code HandlerStruct}), the
 * process-wide upcall stubs and the registry of exports ({@code Upcalls}), an export's block table
 * ({@code Export}) and the downcalls of an imported handler ({@code ImportedAllocator}). Not
 * exported.
 */
package io.datamem.numpy.internal;
