package io.datamem.cuda.internal;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The last asynchronous work datamem enqueued on each block of CUDA memory: the stream, and an
 * event recorded after the work. Exports read it (the {@code device_info} stream, DLPack
 * synchronisation), copies order themselves after it, and frees drop it. Keyed by the start of the
 * block as arrays see it (an array's address minus its byte offset). Internal.
 */
public final class StreamRecords {

    /**
     * The record of one block.
     *
     * @param event       an event recorded after the last work on the block
     * @param eventDevice the device the event belongs to
     * @param stream      the stream the work ran on
     */
    public record Entry(long event, int eventDevice, long stream) {
    }

    private static final StreamRecords GLOBAL = new StreamRecords();

    private final ConcurrentHashMap<Long, Entry> entries = new ConcurrentHashMap<>();

    private StreamRecords() {
    }

    /**
     * The records of this JVM.
     *
     * @return the shared instance
     */
    public static StreamRecords global() {
        return GLOBAL;
    }

    /**
     * The record of a block.
     *
     * @param block the block's start
     * @return the entry, or null if no asynchronous work is recorded
     */
    public Entry get(long block) {
        return entries.get(block);
    }

    /**
     * Before enqueuing work on a block: a stream other than the one last used waits for that
     * stream's work, so datamem's operations on a block run in the order they were issued.
     *
     * @param block  the block's start
     * @param device the device current for the wait
     * @param stream the stream about to be used
     */
    public void orderBefore(long block, int device, long stream) {
        Entry e = entries.get(block);
        if (e != null && DLPackStreams.needsWait(e.stream(), stream)) {
            CudaRuntime.waitEvent(device, stream, e.event());
        }
    }

    /**
     * After enqueuing work on a block: records an event on the stream.
     *
     * @param block  the block's start
     * @param device the stream's device
     * @param stream the stream used
     */
    public void recordAfter(long block, int device, long stream) {
        entries.compute(block, (k, old) -> {
            long event;
            if (old != null && old.eventDevice() == device) {
                event = old.event();       // re-recording overwrites the event's state
            } else {
                if (old != null) {
                    CudaRuntime.destroyEvent(old.eventDevice(), old.event());
                }
                event = CudaRuntime.createEvent(device);
            }
            CudaRuntime.recordEvent(device, event, stream);
            return new Entry(event, device, stream);
        });
    }

    /**
     * Blocks until the recorded work on a block is done, and drops the record.
     *
     * @param block the block's start
     */
    public void awaitAndClear(long block) {
        Entry e = entries.remove(block);
        if (e != null) {
            try {
                CudaRuntime.synchronizeEvent(e.eventDevice(), e.event());
            } finally {
                CudaRuntime.destroyEvent(e.eventDevice(), e.event());
            }
        }
    }

    /**
     * Blocks until the recorded work on a block is done, keeping the record.
     *
     * @param block the block's start
     */
    public void await(long block) {
        Entry e = entries.get(block);
        if (e != null) {
            CudaRuntime.synchronizeEvent(e.eventDevice(), e.event());
        }
    }

    /**
     * Drops a block's record when the block is freed (waiting for its work first: memory must not
     * be reused while a copy still reads or writes it).
     *
     * @param block the block's start
     */
    public void forget(long block) {
        awaitAndClear(block);
    }

    /**
     * Drops the records of a stream being destroyed (its work is done: the stream was synchronised),
     * so that a later stream reusing its handle is not mistaken for it.
     *
     * @param stream the stream value
     */
    public void streamDestroyed(long stream) {
        entries.forEach((block, e) -> {
            if (e.stream() == stream && entries.remove(block, e)) {
                CudaRuntime.destroyEvent(e.eventDevice(), e.event());
            }
        });
    }

    /**
     * The number of blocks with a record.
     *
     * @return the count
     */
    public int size() {
        return entries.size();
    }
}
