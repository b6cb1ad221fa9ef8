package io.datamem.buffer;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.datamem.testing.FuzzArena;

/**
 * Fuzz targets for {@link BufferView#fromNative}: the fuzzer's bytes are a classic (80 bytes) or
 * extended {@code Py_buffer} at the start of a {@link FuzzArena}, its {@code buf}, {@code obj},
 * {@code format}, {@code shape}, {@code strides}, {@code suboffsets}, {@code internal},
 * {@code device} and {@code device_info} pointing into the arena (the device info struct is then
 * fuzzer bytes too; its handles are opaque values, never dereferenced). Only the documented
 * {@link IllegalArgumentException} may escape ({@link BufferException} where the view's own
 * checks refuse the combination). The described memory is never read.
 */
class PyBufferImportFuzzTest {

    @FuzzTest
    void classic(byte[] input) {
        read(input, false);
    }

    @FuzzTest
    void extended(byte[] input) {
        read(input, true);
    }

    private static void read(byte[] input, boolean extended) {
        try (FuzzArena arena = new FuzzArena(input)) {
            for (long field : new long[] {0, 8, 40, 48, 56, 64, 72}) {
                arena.pointer(field);
            }
            if (extended) {
                arena.pointer(88);
                arena.pointer(96);
            }
            BufferView view;
            try {
                view = BufferView.fromNative(arena.at(0), extended);
            } catch (IllegalArgumentException | BufferException refused) {
                return;
            }
            view.toString();
            view.release();
        }
    }
}
