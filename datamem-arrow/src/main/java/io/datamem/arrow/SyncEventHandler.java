package io.datamem.arrow;

import io.datamem.Device;

import java.lang.foreign.MemorySegment;

/**
 * What an importer of an {@code ArrowDeviceArray} does with its {@code sync_event}: the C Device
 * Data Interface requires the consumer to wait on a non-NULL event (for CUDA a
 * {@code cudaEvent_t*}, for ROCm a {@code hipEvent_t*}) before it touches the memory, and datamem
 * does not know each device runtime's event API. The handler is called once, before the array is
 * imported; should it throw, the import fails and the structs stay the caller's.
 */
@FunctionalInterface
public interface SyncEventHandler {

    /**
     * Makes the memory of an imported array ready, for example by making the consumer's stream
     * wait on the event ({@code cudaStreamWaitEvent}) or by waiting on the host
     * ({@code cudaEventSynchronize}).
     *
     * @param syncEvent the producer's {@code sync_event} (a pointer to the device's event type),
     *                  never NULL
     * @param device    the device the memory is on
     */
    void await(MemorySegment syncEvent, Device device);
}
