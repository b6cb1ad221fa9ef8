package io.datamem.benchmarks.cuda;

import io.datamem.cuda.Cuda;

import java.util.Locale;

/** What the CUDA benchmarks share. */
final class CudaBenchmarks {

    /** The sizes measured, as JMH parameters: 64 KiB to 1 GiB, by fours. */
    static final String[] SIZES = {"64k", "256k", "1m", "4m", "16m", "64m", "256m", "1g"};

    /** PCIe Gen5 x16, per direction, in GB/s (10^9 bytes per second). */
    static final double PCIE_GEN5_X16_GBPS = 63.0;

    private CudaBenchmarks() {
    }

    /**
     * Fails a benchmark's setup without a GPU.
     *
     * @throws IllegalStateException saying why CUDA is unavailable
     */
    static void requireGpu() {
        if (!Cuda.isAvailable()) {
            throw new IllegalStateException("the CUDA benchmarks need a CUDA GPU: " + Cuda.availability().reason());
        }
    }

    /**
     * Parses {@code 64k}, {@code 1m}, {@code 1g}.
     *
     * @param size the text
     * @return bytes
     */
    static long bytes(String size) {
        String s = size.toLowerCase(Locale.ROOT);
        long unit = switch (s.charAt(s.length() - 1)) {
            case 'k' -> 1L << 10;
            case 'm' -> 1L << 20;
            case 'g' -> 1L << 30;
            default -> 1;
        };
        return Long.parseLong(unit == 1 ? s : s.substring(0, s.length() - 1)) * unit;
    }
}
