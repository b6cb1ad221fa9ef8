package io.datamem.numpy;

import io.datamem.DataMem;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.Cuda;
import io.datamem.cuda.CudaMemory;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * PyTorch and CuPy, in CPython embedded in this JVM, consume a datamem array of CUDA device memory
 * through DLPack capsules ({@code DLPack.toDLPack} on the legacy default stream): each reads it on
 * the GPU and writes into it in place, the array sees their writes, and each calls the deleter
 * (the capsule is renamed {@code used_dltensor}). Needs a CUDA GPU, a shared libpython and a
 * Python with {@code torch} (built for CUDA) and {@code cupy}; skips saying which is missing.
 */
@Tag("cuda")
class DLPackGpuConsumersTest {

    private static final int N = 1 << 20;

    @Test
    void torchAndCupyReadAndWriteADatamemDeviceTensor() {
        Assumptions.assumeTrue(Cuda.isAvailable(), () -> "needs a CUDA GPU, unavailable here: "
                + Cuda.availability().reason() + "; on a GPU machine: gpu/check (docs/architecture.md)");
        EmbeddedPython python = EmbeddedPython.get();
        String missing = python.withGil(() -> {
            python.exec("""
                    try:
                        import torch, cupy
                        _dm_missing = '' if torch.cuda.is_available() else 'torch ' + torch.__version__ + ' sees no CUDA device'
                    except ImportError as e:
                        _dm_missing = 'cannot import torch and cupy: ' + str(e)
                    """);
            return python.eval("_dm_missing");
        });
        Assumptions.assumeTrue(missing.isEmpty(), () -> "needs PyTorch and CuPy in " + python.library() + "'s Python: "
                + missing);
        try (NDArray host = NDArray.empty(DType.FLOAT32, N);
             NDArray device = DataMem.callWith(DataMem.handler("cuda:device=0"), () -> NDArray.empty(DType.FLOAT32, N));
             Arena names = Arena.ofConfined()) {
            for (int i = 0; i < N; i++) {
                host.setDouble(i % 1000, i);
            }
            CudaMemory.copy(host, device);
            DLPackOptions onLegacyStream = DLPackOptions.defaults().withStream(1);
            MemorySegment dltensor = names.allocateFrom("dltensor");
            MemorySegment used = names.allocateFrom("used_dltensor");
            String report = python.withGil(() -> {
                MemorySegment forTorch = python.capsule(DLPack.toDLPack(device, onLegacyStream), dltensor);
                MemorySegment forCupy = python.capsule(DLPack.toDLPack(device, onLegacyStream), dltensor);
                python.setGlobal("_dm_torch_capsule", forTorch);
                python.setGlobal("_dm_cupy_capsule", forCupy);
                python.exec("""
                        import gc, torch, cupy
                        t = torch.utils.dlpack.from_dlpack(_dm_torch_capsule)
                        assert t.device.type == 'cuda' and t.dtype == torch.float32 and tuple(t.shape) == (%d,), t
                        _dm_torch = float(t.double().sum())
                        t.mul_(2)
                        torch.cuda.synchronize()
                        del t
                        class _Exported:
                            def __init__(self, capsule):
                                self.capsule = capsule
                            def __dlpack__(self, *args, **kwargs):
                                return self.capsule
                            def __dlpack_device__(self):
                                return (2, 0)
                        c = cupy.from_dlpack(_Exported(_dm_cupy_capsule))
                        _dm_cupy = float(c.astype(cupy.float64).sum())
                        c += 1
                        cupy.cuda.runtime.deviceSynchronize()
                        del c
                        gc.collect()
                        _dm_report = f'torch {torch.__version__} sum {_dm_torch}, cupy {cupy.__version__} sum {_dm_cupy}'
                        """.formatted(N));
                assertNotEquals(0, python.capsulePointer(forTorch, used).address(), "PyTorch took the capsule");
                assertNotEquals(0, python.capsulePointer(forCupy, used).address(), "CuPy took the capsule");
                python.exec("del _dm_torch_capsule, _dm_cupy_capsule");
                python.decref(forTorch);
                python.decref(forCupy);
                return python.eval("_dm_report");
            });
            double sum = 0;
            for (int i = 0; i < N; i++) {
                sum += i % 1000;
            }
            double torchSum = Double.parseDouble(python.withGil(() -> python.eval("_dm_torch")));
            double cupySum = Double.parseDouble(python.withGil(() -> python.eval("_dm_cupy")));
            assertEquals(sum, torchSum, "PyTorch read the array: " + report);
            assertEquals(2 * sum, cupySum, "CuPy read PyTorch's writes: " + report);
            try (NDArray back = CudaMemory.toHost(device)) {
                for (int i = 0; i < N; i += 997) {
                    assertEquals(2.0 * (i % 1000) + 1, back.getDouble(i), "element " + i + " after both consumers wrote");
                }
            }
            System.out.println("DLPack consumers of a datamem device tensor: " + report);
        }
    }
}
