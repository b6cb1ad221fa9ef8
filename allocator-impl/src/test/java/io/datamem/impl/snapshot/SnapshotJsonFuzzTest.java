package io.datamem.impl.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target for the snapshot JSON reader ({@link MemorySnapshot#parse}, which
 * {@code datamem view} and {@code datamem snapshot --diff} run on files from other processes).
 * Only the documented {@link IllegalArgumentException} may escape; a document that reads writes
 * back to a document that reads to the same snapshot.
 */
class SnapshotJsonFuzzTest {

    @FuzzTest
    void parse(byte[] input) {
        MemorySnapshot snapshot;
        try {
            snapshot = MemorySnapshot.parse(new String(input, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException refused) {
            return;
        }
        assertEquals(snapshot, MemorySnapshot.parse(snapshot.toJson()));
    }
}
