package io.datamem.examples.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.cuda.Cuda;
import io.datamem.cuda.CudaDevice;
import io.datamem.cuda.CudaMemory;
import io.datamem.cuda.CudaStream;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Stages a data set from ordinary (pageable) host memory to the GPU and back through two pinned
 * buffers from {@code pool(cuda:pinned)}, double-buffered on two streams: while the GPU's copy
 * engine moves one buffer, the CPU fills (or drains) the other. Prints the bandwidth of each
 * direction, end to end, and checks the data came back bit for bit.
 *
 * <pre>{@code
 * java --enable-native-access=ALL-UNNAMED -cp 'examples/target/datamem-examples.jar:examples/target/lib/*' \
 *     io.datamem.examples.cuda.PinnedStaging [MiB] [device]
 * }</pre>
 *
 * <p>Without a GPU it says why and exits with status 2.
 */
public final class PinnedStaging {

    /** The size of each pinned staging buffer. */
    public static final long CHUNK_BYTE_SIZE = 8L << 20;

    private PinnedStaging() {
    }

    /**
     * What a staging run measured.
     *
     * @param byteSize         the bytes moved each way
     * @param hostToDeviceGBps host to device, end to end, in GB/s (10^9 bytes per second)
     * @param deviceToHostGBps device to host, end to end, in GB/s
     * @param bitExact         whether the data came back unchanged
     */
    public record Result(long byteSize, double hostToDeviceGBps, double deviceToHostGBps, boolean bitExact) {
    }

    /**
     * Runs the example.
     *
     * @param args optional: the data set size in MiB (default 256), the device ordinal (default 0)
     */
    public static void main(String[] args) {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 256;
        int device = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        System.exit(run(System.out, mib << 20, device));
    }

    /**
     * Runs the example and prints what it measured.
     *
     * @param out      where to print
     * @param byteSize the data set size in bytes, at least 1
     * @param device   the device ordinal
     * @return 0 if the data came back bit for bit, 1 if not, 2 if there is no GPU here
     * @throws IllegalArgumentException if {@code byteSize} is not positive or the device does not exist
     */
    public static int run(PrintStream out, long byteSize, int device) {
        if (byteSize < 1) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 1)");
        }
        if (!Cuda.isAvailable()) {
            out.println("pinned staging: skipped, no GPU here: " + Cuda.availability().reason());
            return 2;
        }
        CudaDevice d = Cuda.devices().stream().filter(x -> x.ordinal() == device).findFirst().orElseThrow(
                () -> new IllegalArgumentException("device: " + device + " (expected: one of " + Cuda.devices() + ")"));
        out.printf(Locale.ROOT, "pinned staging on %s: %d MiB through 2 x %d MiB buffers of pool(cuda:pinned)%n", d,
                byteSize >> 20, Math.min(CHUNK_BYTE_SIZE, byteSize) >> 20);
        Result r = stage(byteSize, device);
        out.printf(Locale.ROOT, "  host -> device: %6.2f GB/s (end to end: pageable -> pinned by the CPU, pinned -> device"
                + " by DMA)%n", r.hostToDeviceGBps());
        out.printf(Locale.ROOT, "  device -> host: %6.2f GB/s%n", r.deviceToHostGBps());
        out.println("  round trip bit-exact: " + (r.bitExact() ? "yes" : "NO"));
        return r.bitExact() ? 0 : 1;
    }

    /**
     * Moves {@code byteSize} random bytes to a device and back through pinned staging buffers.
     *
     * @param byteSize the data set size, at least 1
     * @param device   the device ordinal
     * @return the measurements
     * @throws IllegalStateException    if CUDA is unavailable here
     * @throws IllegalArgumentException if the device does not exist
     */
    public static Result stage(long byteSize, int device) {
        DataMemHandler pinned = DataMem.handler("pool(cuda:pinned=" + device + ")");
        DataMemHandler onDevice = DataMem.handler("cuda:device=" + device);
        long chunk = Math.min(CHUNK_BYTE_SIZE, byteSize);
        try (NDArray source = NDArray.empty(DType.UINT8, byteSize);
             NDArray result = NDArray.zeros(DType.UINT8, byteSize);
             NDArray gpu = DataMem.callWith(onDevice, () -> NDArray.empty(DType.UINT8, byteSize));
             NDArray stage0 = DataMem.callWith(pinned, () -> NDArray.empty(DType.UINT8, chunk));
             NDArray stage1 = DataMem.callWith(pinned, () -> NDArray.empty(DType.UINT8, chunk));
             CudaStream s0 = CudaStream.createNonBlocking(device);
             CudaStream s1 = CudaStream.createNonBlocking(device)) {
            fill(source.segment());
            NDArray[] stages = {stage0, stage1};
            CudaStream[] streams = {s0, s1};

            long t0 = System.nanoTime();
            int i = 0;
            for (long off = 0; off < byteSize; off += chunk, i++) {
                int b = i & 1;
                streams[b].synchronize();                  // this buffer's previous copy is done
                long len = Math.min(chunk, byteSize - off);
                NDArray st = part(stages[b], 0, len);
                MemorySegment.copy(source.segment(), off, st.segment(), 0, len);
                CudaMemory.copyAsync(st, part(gpu, off, len), streams[b]);
            }
            s0.synchronize();
            s1.synchronize();
            long t1 = System.nanoTime();

            long[] pending = {-1, -1};
            i = 0;
            for (long off = 0; off < byteSize; off += chunk, i++) {
                int b = i & 1;
                drain(streams[b], stages[b], pending, b, chunk, byteSize, result);
                long len = Math.min(chunk, byteSize - off);
                CudaMemory.copyAsync(part(gpu, off, len), part(stages[b], 0, len), streams[b]);
                pending[b] = off;
            }
            drain(s0, stage0, pending, 0, chunk, byteSize, result);
            drain(s1, stage1, pending, 1, chunk, byteSize, result);
            long t2 = System.nanoTime();

            boolean exact = source.segment().mismatch(result.segment()) == -1;
            return new Result(byteSize, byteSize / (double) (t1 - t0), byteSize / (double) (t2 - t1), exact);
        }
    }

    /** Waits for a buffer's copy from the device and moves its bytes into the result. */
    private static void drain(CudaStream stream, NDArray stage, long[] pending, int b, long chunk, long byteSize,
                              NDArray result) {
        if (pending[b] < 0) {
            return;
        }
        stream.synchronize();
        long off = pending[b];
        long len = Math.min(chunk, byteSize - off);
        MemorySegment.copy(stage.segment(), 0, result.segment(), off, len);
        pending[b] = -1;
    }

    private static NDArray part(NDArray a, long offset, long length) {
        return offset == 0 && length == a.size() ? a : a.slice(Slice.range(offset, offset + length));
    }

    private static void fill(MemorySegment s) {
        SplittableRandom r = new SplittableRandom(42);
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }
}
