/**
 * UCX: memory registered for remote access, remote keys, and zero-copy transfers of arrays between
 * processes.
 *
 * <p>Handler names: {@code ucx} (UCX allocates registered memory: {@link io.datamem.ucx.UcxAllocator})
 * and the adaptor {@code +ucx} ({@code aligned64+ucx}, {@code pool(aligned4096)+ucx}: every block of
 * the upstream registered, {@link io.datamem.ucx.UcxRegisteringAdaptor}); both use
 * {@link io.datamem.ucx.UcxContext#shared()}. Transfers: {@link io.datamem.ucx.UcxContext},
 * {@link io.datamem.ucx.UcxEndpoint}, {@link io.datamem.ucx.RemoteRegion},
 * {@link io.datamem.ucx.UcxBootstrap}. Errors: {@link io.datamem.ucx.UcxException}.
 *
 * <p>Null policy: every method throws {@link java.lang.NullPointerException} for a null argument.
 * Threads: contexts and endpoints may be shared; their worker calls are serialised.
 */
package io.datamem.ucx;
