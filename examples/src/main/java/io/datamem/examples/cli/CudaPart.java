package io.datamem.examples.cli;

import io.datamem.cuda.Cuda;
import io.datamem.examples.cuda.PinnedStaging;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The demo's CUDA part: 64 MiB staged to the first GPU and back through a pool of pinned memory,
 * or one line saying it is skipped and why.
 */
final class CudaPart {

    static final long BYTE_SIZE = 64L << 20;

    private CudaPart() {
    }

    /**
     * Runs the part.
     *
     * @return false only if a GPU is present and the data did not come back bit for bit
     */
    static boolean run(PrintStream out) {
        if (!Cuda.isAvailable()) {
            out.println("cuda: skipped, no GPU here: " + Cuda.availability().reason());
            return true;
        }
        PinnedStaging.Result r = PinnedStaging.stage(BYTE_SIZE, 0);
        out.printf(Locale.ROOT, "cuda: %d MiB staged to %s through pool(cuda:pinned) and back: %s;"
                        + " host -> device %.2f GB/s, device -> host %.2f GB/s (end to end)%n", BYTE_SIZE >> 20,
                Cuda.devices().get(0), r.bitExact() ? "bit-exact" : "DIFFERENT", r.hostToDeviceGBps(),
                r.deviceToHostGBps());
        return r.bitExact();
    }
}
