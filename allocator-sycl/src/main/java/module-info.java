/**
 * datamem SYCL backend: SYCL USM host, shared and device memory through the OpenCL USM extension.
 */
module io.datamem.sycl {
    requires transitive io.datamem.impl;
}
