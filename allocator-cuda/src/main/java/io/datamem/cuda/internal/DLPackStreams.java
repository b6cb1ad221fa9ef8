package io.datamem.cuda.internal;

import java.util.OptionalLong;

/**
 * DLPack's stream values for CUDA ({@code __dlpack__(stream=...)} of the Python array API): what
 * a consumer may pass, and when the producer must order its work before the consumer's stream.
 * Pure logic, tested without a GPU. Internal.
 *
 * <ul>
 *   <li>{@code None} (empty): the legacy default stream;</li>
 *   <li>1: the legacy default stream ({@code cudaStreamLegacy});</li>
 *   <li>2: the per-thread default stream ({@code cudaStreamPerThread}) of the consumer's thread;</li>
 *   <li>any other positive value: a {@code cudaStream_t};</li>
 *   <li>-1: no synchronisation (datamem's DLPack export never calls the backend then);</li>
 *   <li>0: forbidden for CUDA (it is ambiguous between 1 and 2);</li>
 *   <li>other negative values: not stream values.</li>
 * </ul>
 */
public final class DLPackStreams {

    /** {@code cudaStreamLegacy}. */
    public static final long LEGACY = CudaRuntime.STREAM_LEGACY;
    /** {@code cudaStreamPerThread}. */
    public static final long PER_THREAD = CudaRuntime.STREAM_PER_THREAD;
    /** DLPack's "no synchronisation". */
    public static final long NO_SYNC = -1;

    private DLPackStreams() {
    }

    /**
     * The stream a consumer will use, as a {@code cudaStream_t} value.
     *
     * @param consumerStream what the consumer passed, empty for {@code None}
     * @return {@link #LEGACY}, {@link #PER_THREAD}, a stream value, or {@link #NO_SYNC}
     * @throws IllegalArgumentException for 0 and for negative values other than -1
     */
    public static long consumerStream(OptionalLong consumerStream) {
        if (consumerStream.isEmpty()) {
            return LEGACY;
        }
        long s = consumerStream.getAsLong();
        if (s == 0) {
            throw new IllegalArgumentException("stream: 0 (expected: 1 for the legacy default stream, 2 for the"
                    + " per-thread default stream, a cudaStream_t, or -1 for no synchronisation; DLPack forbids 0"
                    + " for CUDA because it is ambiguous)");
        }
        if (s < NO_SYNC) {
            throw new IllegalArgumentException("stream: " + s + " (expected: -1, 1, 2 or a cudaStream_t)");
        }
        return s;
    }

    /**
     * The stream a producer's recorded stream value stands for: the default stream (0) is the
     * legacy default stream, as in code compiled without per-thread default streams.
     *
     * @param producerStream a recorded stream value, 0 for the default stream
     * @return the stream value
     */
    public static long producerStream(long producerStream) {
        return producerStream == 0 ? LEGACY : producerStream;
    }

    /**
     * Whether the consumer's stream must wait for the producer's work: always, except when both
     * are the legacy default stream or the same created stream (work on one stream is ordered).
     * The per-thread default stream is never assumed to be the same stream: it is a different
     * stream on every host thread, and the consumer may be on another thread than the producer.
     *
     * @param producerStream the producer's stream value (0 or 1 for the legacy default stream)
     * @param consumerStream the consumer's stream value from {@link #consumerStream}
     * @return whether to record an event on the producer's stream and make the consumer's wait
     */
    public static boolean needsWait(long producerStream, long consumerStream) {
        if (consumerStream == NO_SYNC) {
            return false;
        }
        long p = producerStream(producerStream);
        if (p == PER_THREAD || consumerStream == PER_THREAD) {
            return true;
        }
        return p != consumerStream;
    }
}
