/**
 * Implementation of the SYCL backend: OpenCL bindings, device enumeration, error names and the
 * provider. Not exported.
 */
package io.datamem.sycl.internal;
