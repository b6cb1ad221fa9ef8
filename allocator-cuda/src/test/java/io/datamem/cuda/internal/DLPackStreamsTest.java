package io.datamem.cuda.internal;

import org.junit.jupiter.api.Test;

import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** DLPack's CUDA stream values and when the producer must order its work before the consumer. */
class DLPackStreamsTest {

    private static final long MINE = 0x7f00_1234_5000L;
    private static final long THEIRS = 0x7f00_9876_5000L;

    @Test
    void consumerValues() {
        assertEquals(DLPackStreams.LEGACY, DLPackStreams.consumerStream(OptionalLong.empty()), "None: legacy default");
        assertEquals(1, DLPackStreams.consumerStream(OptionalLong.of(1)));
        assertEquals(2, DLPackStreams.consumerStream(OptionalLong.of(2)));
        assertEquals(MINE, DLPackStreams.consumerStream(OptionalLong.of(MINE)));
        assertEquals(-1, DLPackStreams.consumerStream(OptionalLong.of(-1)));
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> DLPackStreams.consumerStream(OptionalLong.of(0)));
        assertTrue(zero.getMessage().startsWith("stream: 0 (expected: 1 for the legacy default stream"),
                zero.getMessage());
        assertTrue(zero.getMessage().contains("DLPack forbids 0 for CUDA"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DLPackStreams.consumerStream(OptionalLong.of(-2)));
        assertThrows(IllegalArgumentException.class, () -> DLPackStreams.consumerStream(OptionalLong.of(Long.MIN_VALUE)));
    }

    @Test
    void theDefaultStreamIsTheLegacyOne() {
        assertEquals(DLPackStreams.LEGACY, DLPackStreams.producerStream(0));
        assertEquals(DLPackStreams.LEGACY, DLPackStreams.producerStream(1));
        assertEquals(MINE, DLPackStreams.producerStream(MINE));
    }

    @Test
    void whenTheConsumerMustWait() {
        assertFalse(DLPackStreams.needsWait(0, DLPackStreams.LEGACY), "legacy default on both sides: ordered");
        assertFalse(DLPackStreams.needsWait(1, DLPackStreams.LEGACY));
        assertFalse(DLPackStreams.needsWait(MINE, MINE), "the same created stream: ordered");
        assertTrue(DLPackStreams.needsWait(MINE, THEIRS));
        assertTrue(DLPackStreams.needsWait(MINE, DLPackStreams.LEGACY));
        assertTrue(DLPackStreams.needsWait(0, THEIRS), "work on the legacy stream, consumer on its own stream");
        assertTrue(DLPackStreams.needsWait(0, DLPackStreams.PER_THREAD));
        assertTrue(DLPackStreams.needsWait(DLPackStreams.PER_THREAD, DLPackStreams.PER_THREAD),
                "per-thread default streams of two threads are different streams");
        assertFalse(DLPackStreams.needsWait(MINE, DLPackStreams.NO_SYNC), "-1: the consumer asked for nothing");
    }
}
