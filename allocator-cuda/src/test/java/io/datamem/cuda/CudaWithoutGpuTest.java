package io.datamem.cuda;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.internal.CudaDriver;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A machine without a CUDA driver (this build machine, CI): the module loads, the provider says
 * why it is unavailable, every CUDA entry point fails with that reason, and the driver's functions
 * are never bound (no downcall to CUDA is ever made).
 */
class CudaWithoutGpuTest {

    private static final String NO_DRIVER = "no CUDA driver: libcuda.so.1 not found";

    /** Whether something in this JVM bound the driver before (only possible with a driver). */
    private static boolean boundBefore;

    @BeforeAll
    static void before() {
        boundBefore = CudaTests.driverBound();
    }

    @BeforeEach
    void noDriver() {
        CudaTests.assumeNoDriver();
    }

    @AfterAll
    static void theDriverWasNeverBound() {
        if (!CudaTests.driverPresent()) {
            assertNotLoaded();
        }
    }

    private static void assertNotLoaded() {
        if (!boundBefore) {
            assertFalse(CudaTests.driverBound(), "the CUDA driver's functions were bound without a driver");
        }
    }

    @Test
    void theProviderIsListedAndUnavailableWithTheReason() {
        DataMemProvider cuda = DataMemProvider.installed().stream().filter(p -> p.name().equals("cuda")).findFirst()
                .orElseThrow(() -> new AssertionError("provider 'cuda' not found by ServiceLoader"));
        Availability a = cuda.availability();
        assertFalse(a.available());
        assertTrue(a.reason().startsWith(NO_DRIVER), a.reason());
        assertTrue(a.reason().contains("install the NVIDIA driver"), "says what to do: " + a.reason());
        assertEquals(a, Cuda.availability());
        assertFalse(Cuda.isAvailable());
        assertEquals(List.of(), Cuda.devices());
        assertEquals(0, Cuda.driverVersion());
        assertTrue(Cuda.report().startsWith("unavailable: " + NO_DRIVER), Cuda.report());
        assertTrue(DataMem.describeProviders().contains("[unavailable: " + NO_DRIVER), DataMem.describeProviders());
        assertNotLoaded();
    }

    @Test
    void requestingACudaHandlerFailsWithTheReason() {
        for (String name : List.of("cuda:pinned", "cuda:device=0", "cuda:managed=0", "cuda:registered(numa:local)",
                "pool(cuda:pinned)", "cuda:pinned,portable,mapped+stats")) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> DataMem.createHandler(name),
                    name);
            assertTrue(e.getMessage().contains("unavailable") && e.getMessage().contains(NO_DRIVER),
                    name + ": " + e.getMessage());
        }
        assertNotLoaded();
    }

    @Test
    void allocatorsAndStreamsFailWithTheReasonAndCallerMistakesComeFirst() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> CudaDeviceAllocator.of(0));
        assertTrue(e.getMessage().startsWith("CUDA is unavailable: " + NO_DRIVER), e.getMessage());
        assertThrows(IllegalStateException.class, () -> CudaPinnedAllocator.of(0));
        assertThrows(IllegalStateException.class, () -> CudaManagedAllocator.of(0));
        assertThrows(IllegalStateException.class,
                () -> CudaRegisteredAllocator.builder(DataMem.handler("aligned:4096").allocator()).build());
        assertThrows(IllegalStateException.class, () -> CudaStream.create(0));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> CudaDeviceAllocator.of(-1));
        assertEquals("device: -1 (expected: a CUDA device ordinal >= 0)", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaPinnedAllocator.builder().device(-2));
        IllegalArgumentException pageShared = assertThrows(IllegalArgumentException.class,
                () -> CudaRegisteredAllocator.builder(DataMem.builtinDefault().allocator()).build());
        assertTrue(pageShared.getMessage().contains("expected: at least the page size"), pageShared.getMessage());
        assertNotLoaded();
    }

    @Test
    void copiesCheckTheirArgumentsBeforeSayingCudaIsUnavailable() {
        try (NDArray a = NDArray.zeros(DType.FLOAT32, 4); NDArray b = NDArray.zeros(DType.FLOAT32, 5);
             NDArray c = NDArray.zeros(DType.FLOAT32, 4)) {
            assertThrows(IllegalArgumentException.class, () -> CudaMemory.copy(a, b));
            assertThrows(IllegalArgumentException.class, () -> CudaMemory.copy(MemorySegment.ofArray(new byte[4]),
                    MemorySegment.ofAddress(a.address()), 4));
            assertThrows(IllegalArgumentException.class, () -> CudaMemory.copy(MemorySegment.ofAddress(a.address()),
                    MemorySegment.ofAddress(c.address()), -1));
            assertThrows(UnsupportedOperationException.class, () -> CudaMemory.copy(a, c.asReadOnly()));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> CudaMemory.copy(a, c));
            assertTrue(e.getMessage().contains(NO_DRIVER), e.getMessage());
            assertThrows(IllegalStateException.class, () -> CudaMemory.toHost(a));
        }
        assertNotLoaded();
    }

    @Test
    void streamValuesFollowCudaAndDLPackWithoutTouchingCuda() {
        CudaStream legacy = CudaStream.legacy(0);
        assertEquals(CudaStream.LEGACY, legacy.handle());
        assertEquals(1, legacy.handle());
        assertEquals(2, CudaStream.perThread(1).handle());
        assertEquals(1, CudaStream.perThread(1).device());
        assertFalse(legacy.owned());
        assertEquals("CudaStream[legacy default on cuda:0, not owned]", legacy.toString());
        CudaStream foreign = CudaStream.wrap(0x7f00_0000_1000L, 0);
        assertEquals("CudaStream[0x7f0000001000 on cuda:0, not owned]", foreign.toString());
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> CudaStream.wrap(0, 0));
        assertTrue(zero.getMessage().contains("0 means either"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaStream.wrap(-5, 0));
        assertThrows(IllegalArgumentException.class, () -> CudaStream.legacy(-1));
        IllegalStateException unavailable = assertThrows(IllegalStateException.class, legacy::synchronize);
        assertTrue(unavailable.getMessage().contains(NO_DRIVER), unavailable.getMessage());
        foreign.close();   // not owned, nothing held: no CUDA call
        foreign.close();
        assertTrue(foreign.isClosed());
        assertThrows(IllegalStateException.class, foreign::synchronize);
        assertNotLoaded();
    }

    @Test
    void devicesDescribeThemselves() {
        CudaDevice d = new CudaDevice(1, "NVIDIA H100 80GB HBM3", 85_520_809_984L, "0000:3b:00.0", 9, 0);
        assertEquals("cuda:1 NVIDIA H100 80GB HBM3 (79.6 GiB, compute capability 9.0, PCI 0000:3b:00.0)",
                d.toString());
        assertThrows(IllegalArgumentException.class, () -> new CudaDevice(-1, "x", 0, "", 0, 0));
    }

    @Test
    void probingReportsEachMissingPieceInWordsAUserCanActOn() {
        CudaDriver.Probe missing = CudaDriver.probe("libcuda-not-here.so.1", "Linux", "amd64", null);
        assertFalse(missing.availability().available());
        assertTrue(missing.availability().reason().startsWith("no CUDA driver: libcuda-not-here.so.1 not found"),
                missing.availability().reason());
        assertTrue(missing.availability().reason().contains("docker run --gpus all"));
        CudaDriver.Probe mac = CudaDriver.probe(CudaDriver.LIBRARY, "Mac OS X", "aarch64", null);
        assertTrue(mac.availability().reason().contains("Linux x86-64") && mac.availability().reason()
                .contains("Mac OS X aarch64"), mac.availability().reason());
        CudaDriver.Probe arm = CudaDriver.probe(CudaDriver.LIBRARY, "Linux", "aarch64", null);
        assertTrue(arm.availability().reason().contains("linux-x86_64"), arm.availability().reason());
        // a library that opens but is no CUDA driver
        CudaDriver.Probe notCuda = CudaDriver.probe("libc.so.6", "Linux", "amd64", null);
        assertTrue(notCuda.availability().reason().startsWith("no usable CUDA driver: libc.so.6 lacks cuInit"),
                notCuda.availability().reason());
        assertEquals("12.4", CudaDriver.versionString(12040));
        assertEquals("13.0", CudaDriver.versionString(13000));
        assertEquals("unknown", CudaDriver.versionString(0));
    }

    @Test
    void theTraitsOfCudaMemoryNeedNoGpu() {
        DataMemAllocator fake = CudaTests.hostBacked(CudaDeviceAllocator.traits(0));
        assertFalse(fake.traits().hostAccessible());
        assertNotLoaded();
    }
}
