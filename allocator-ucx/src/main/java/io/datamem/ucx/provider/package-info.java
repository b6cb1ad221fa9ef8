/**
 * The UCX module's {@link io.datamem.spi.DataMemProvider}s: the leaf {@code ucx} and the adaptor
 * {@code +ucx}. Built on the exported {@code io.datamem.ucx} API and the bindings of
 * {@code io.datamem.ucx.internal}, on top of the module's packages. Not exported.
 */
package io.datamem.ucx.provider;
