/** UCX bindings (FFM), struct layouts and the providers of {@code ucx} and {@code +ucx}. Internal. */
package io.datamem.ucx.internal;
