/**
 * UCX benchmarks (outside the suite): put, get and tagged send/receive over loopback against a
 * plain socket copy and {@code memcpy}, and registration with and without the cache. See
 * {@code docs/distributed.md} for the command and the figures.
 */
package io.datamem.benchmarks.ucx;
