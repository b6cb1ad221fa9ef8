/**
 * dpctl's SYCL USM array interface ({@code __sycl_usm_array_interface__}):
 * {@link io.datamem.usm.SyclUsmArrayInterface}, {@link io.datamem.usm.UsmKind} and the
 * {@code syclobj} forms of {@link io.datamem.usm.SyclObject}.
 *
 * <p>Null policy: no method accepts or returns null unless its documentation says so. Threading:
 * every type here is immutable.
 */
package io.datamem.usm;
