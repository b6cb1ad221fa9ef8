package io.datamem.benchmarks.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.CudaMemory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Synchronous copies of one buffer between host memory and device memory
 * ({@link CudaMemory#copy(NDArray, NDArray)}), host to device and device to host, for four kinds of
 * host memory: pageable ({@code default_allocator}), pinned ({@code cuda:pinned}), pinned from a pool
 * ({@code pool(cuda:pinned):max=1g}) and registered ({@code cuda:registered(aligned:4096)}), from
 * 64 KiB to 1 GiB. The score is the time per copy; bandwidth is the size divided by it
 * ({@link CudaBandwidthReport} prints it in GB/s). The buffers are allocated and touched once per
 * trial, outside the measurement.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class CudaTransferBenchmark {

    /** The host memory. */
    @Param({"pageable", "pinned", "pinned-pooled", "registered"})
    public String memory;

    /** The bytes per copy. */
    @Param({"64k", "256k", "1m", "4m", "16m", "64m", "256m", "1g"})
    public String size;

    private NDArray host;
    private NDArray device;

    /** Creates the state (JMH instantiates it). */
    public CudaTransferBenchmark() {
    }

    /** Allocates and touches the two buffers. */
    @Setup(Level.Trial)
    public void allocate() {
        CudaBenchmarks.requireGpu();
        long n = CudaBenchmarks.bytes(size);
        DataMemHandler h = DataMem.createHandler(switch (memory) {
            case "pageable" -> "default_allocator";
            case "pinned" -> "cuda:pinned";
            case "pinned-pooled" -> "pool(cuda:pinned):max=1g";
            case "registered" -> "cuda:registered(aligned:4096)";
            default -> throw new IllegalArgumentException("memory: " + memory);
        });
        host = DataMem.callWith(h, () -> NDArray.zeros(DType.UINT8, n));
        host.segment().fill((byte) 1);   // every page faulted in before timing
        device = DataMem.callWith(DataMem.createHandler("cuda:device=0"), () -> NDArray.zeros(DType.UINT8, n));
        CudaMemory.copy(host, device);
    }

    /** Frees the buffers. */
    @TearDown(Level.Trial)
    public void free() {
        if (host != null) {
            host.close();
        }
        if (device != null) {
            device.close();
        }
    }

    /** Host to device. */
    @Benchmark
    public void hostToDevice() {
        CudaMemory.copy(host, device);
    }

    /** Device to host. */
    @Benchmark
    public void deviceToHost() {
        CudaMemory.copy(device, host);
    }
}
