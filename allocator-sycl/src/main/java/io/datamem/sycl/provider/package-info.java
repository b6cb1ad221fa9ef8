/**
 * The SYCL backend's {@link io.datamem.spi.DataMemProvider}: the names {@code sycl:host},
 * {@code sycl:shared} and {@code sycl:device}, and the hook for memory imported on a
 * {@code kDLOneAPI} device. Built on the exported {@code io.datamem.sycl} API only, on top of the
 * module's packages, as {@code io.datamem.impl.provider} is in {@code allocator-impl}. Not exported.
 */
package io.datamem.sycl.provider;
