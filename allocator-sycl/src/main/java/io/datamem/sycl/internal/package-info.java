/**
 * The OpenCL bindings of the SYCL backend: the downcalls, the USM extension's functions, error
 * names and the signal handlers kept across the runtime's initialisation. Uses no other package of
 * the module. Not exported.
 */
package io.datamem.sycl.internal;
