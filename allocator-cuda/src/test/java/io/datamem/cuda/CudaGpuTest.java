package io.datamem.cuda;

import io.datamem.BackendException;
import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.dlpack.CopyMode;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import io.datamem.impl.pool.PoolingAllocator;
import io.datamem.internal.Libc;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CUDA backend on a real GPU: handler names, bit-exact round trips through every kind of CUDA
 * memory, streams, buffer and DLPack exports and imports of device tensors, error paths, and device
 * selection across threads. Skipped without a GPU.
 */
@Tag("cuda")
class CudaGpuTest {

    private static final long[] SIZES = {1, 255, 4096, 65_537, 1 << 20, (64 << 20) + 3};

    @BeforeEach
    void gpu() {
        CudaTests.assumeGpu();
    }

    private static NDArray randomBytes(long n, long seed) {
        NDArray a = NDArray.empty(DType.UINT8, n);
        byte[] b = new byte[(int) n];
        new Random(seed).nextBytes(b);
        MemorySegment.copy(b, 0, a.segment(), ValueLayout.JAVA_BYTE, 0, b.length);
        return a;
    }

    private static byte[] bytesOf(NDArray hostArray) {
        return hostArray.segment().toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void handlerNamesBuildTheRightAllocators() {
        assertInstanceOf(CudaPinnedAllocator.class, DataMem.createHandler("cuda:pinned").allocator());
        CudaPinnedAllocator p = assertInstanceOf(CudaPinnedAllocator.class,
                DataMem.createHandler("cuda:pinned,portable,mapped,writecombined").allocator());
        assertTrue(p.portable() && p.mapped() && p.writeCombined());
        assertInstanceOf(CudaDeviceAllocator.class, DataMem.createHandler("cuda:device=0").allocator());
        CudaManagedAllocator m = assertInstanceOf(CudaManagedAllocator.class,
                DataMem.createHandler("cuda:managed=0,attach=host").allocator());
        assertEquals(CudaManagedAllocator.Attach.HOST, m.attach());
        CudaRegisteredAllocator r = assertInstanceOf(CudaRegisteredAllocator.class,
                DataMem.createHandler("cuda:registered,readonly").allocator());
        assertTrue(r.readOnly());
        assertEquals(Libc.pageSize(), r.upstream().traits().byteAlignment());
        PoolingAllocator pool = assertInstanceOf(PoolingAllocator.class,
                DataMem.createHandler("pool(cuda:pinned)").allocator());
        assertEquals(MemoryKind.HOST_PINNED, pool.traits().kind());
        IllegalArgumentException noSuchDevice = assertThrows(IllegalArgumentException.class,
                () -> DataMem.createHandler("cuda:device=" + Cuda.devices().size()));
        assertTrue(noSuchDevice.getMessage().contains("this machine has " + Cuda.devices().size()),
                noSuchDevice.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler("cuda:registered(default_allocator)"),
                "an upstream whose blocks share pages is refused");
    }

    @Test
    void roundTripsThroughEveryKindOfCudaMemoryAreBitExact() {
        for (String via : List.of("cuda:device=0", "cuda:pinned", "cuda:managed=0", "cuda:registered",
                "pool(cuda:device=0)", "pool(cuda:pinned)")) {
            DataMemHandler h = DataMem.createHandler(via);
            for (long n : SIZES) {
                try (NDArray host = randomBytes(n, n);
                     NDArray there = CudaMemory.copyTo(host, h);
                     NDArray back = CudaMemory.toHost(there)) {
                    assertEquals(h.traits().kind(), there.traits().kind());
                    assertArrayEquals(bytesOf(host), bytesOf(back), via + ", " + n + " bytes");
                }
            }
        }
        DataMemHandler device = DataMem.createHandler("cuda:device=0");
        try (NDArray x = NDArray.empty(DType.FLOAT64, 1000)) {
            for (int i = 0; i < 1000; i++) {   // every bit pattern class: NaN payloads, -0.0, subnormals
                x.setDouble(Double.longBitsToDouble(new Random(i).nextLong()), i);
            }
            try (NDArray d = CudaMemory.copyTo(x, device); NDArray d2 = CudaMemory.copyTo(d, device);
                 NDArray back = CudaMemory.toHost(d2)) {
                assertArrayEquals(bytesOf(x), bytesOf(back), "host -> device -> device -> host");
            }
        }
    }

    @Test
    void asynchronousCopiesHoldTheirArraysUntilTheStreamIsSynchronised() {
        DataMemHandler pinned = DataMem.createHandler("pool(cuda:pinned)");
        DataMemHandler device = DataMem.createHandler("cuda:device=0");
        try (NDArray source = DataMem.callWith(pinned, () -> NDArray.empty(DType.UINT8, 8 << 20));
             NDArray target = DataMem.callWith(pinned, () -> NDArray.zeros(DType.UINT8, 8 << 20));
             NDArray d = DataMem.callWith(device, () -> NDArray.empty(DType.UINT8, 8 << 20));
             CudaStream stream = CudaStream.createNonBlocking(0)) {
            byte[] b = new byte[8 << 20];
            new Random(5).nextBytes(b);
            MemorySegment.copy(b, 0, source.segment(), ValueLayout.JAVA_BYTE, 0, b.length);
            CudaMemory.copyAsync(source, d, stream);
            CudaMemory.copyAsync(d, target, stream);
            IllegalStateException held = assertThrows(IllegalStateException.class, d::close);
            assertTrue(held.getMessage().contains("export"), held.getMessage());
            try (BufferView v = d.getBuffer(BufferFlags.STRIDES | BufferFlags.DEVICE)) {
                StandardDeviceInfo info = (StandardDeviceInfo) v.deviceInfo();
                assertEquals(stream.handle(), info.stream(), "device_info names the stream last used");
            }
            stream.synchronize();
            assertTrue(stream.isIdle());
            assertArrayEquals(b, bytesOf(target));
        }
    }

    @Test
    void deviceArraysExportAsCudaBuffers() {
        DataMemHandler device = DataMem.createHandler("cuda:device=0");
        try (NDArray d = DataMem.callWith(device, () -> NDArray.zeros(DType.FLOAT32, 16, 16))) {
            assertThrows(io.datamem.buffer.BufferException.class, () -> d.getBuffer(BufferFlags.FULL_RO));
            try (BufferView v = d.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE)) {
                assertEquals(DeviceInfo.CUDA_DEVICE_ID, v.device());
                StandardDeviceInfo info = assertInstanceOf(StandardDeviceInfo.class, v.deviceInfo());
                assertEquals(new Device(DeviceType.CUDA, 0), info.device());
                assertEquals(MemoryKind.DEVICE, info.kind());
                assertEquals(0, info.stream());
                assertNotEquals(0, info.context(), "the primary context");
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment native1 = v.toNative(arena);
                    assertNotEquals(0, native1.address());
                }
            }
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> d.getDouble(0, 0));
            assertTrue(e.getMessage().contains("CudaMemory"), e.getMessage());
        }
    }

    @Test
    void dlpackExportAndImportOfDeviceTensors() {
        DataMemHandler device = DataMem.createHandler("cuda:device=0");
        try (NDArray host = randomBytes(1 << 20, 9); NDArray d = CudaMemory.copyTo(host, device)) {
            assertEquals(new Device(DeviceType.CUDA, 0), DLPack.dlpackDevice(d));
            NDArray imported = DLPack.fromDLPack(DLPack.toDLPack(d, 1), true);
            try (imported; NDArray back = CudaMemory.toHost(imported)) {
                assertEquals(MemoryKind.DEVICE, imported.traits().kind());
                assertEquals(new Device(DeviceType.CUDA, 0), imported.traits().device());
                assertArrayEquals(bytesOf(host), bytesOf(back), "export -> import -> host");
            }
            // a consumer on its own stream: the producer's work is ordered before it
            try (CudaStream producer = CudaStream.createNonBlocking(0);
                 CudaStream consumer = CudaStream.createNonBlocking(0);
                 NDArray d2 = DataMem.callWith(device, () -> NDArray.empty(DType.UINT8, 1 << 20));
                 NDArray back = NDArray.zeros(DType.UINT8, 1 << 20)) {
                CudaMemory.copyAsync(d, d2, producer);
                MemorySegment t = DLPack.toDLPack(d2, DLPackOptions.defaults().withStream(consumer.handle()));
                NDArray onConsumer = DLPack.fromDLPack(t, true);
                CudaMemory.copyAsync(onConsumer, back, consumer);
                consumer.synchronize();
                assertArrayEquals(bytesOf(host), bytesOf(back), "the consumer's stream saw the producer's data");
                onConsumer.close();
                producer.synchronize();
            }
            // copy=True to the CPU: a host tensor, bit-exact
            MemorySegment cpu = DLPack.toDLPack(d, DLPackOptions.defaults().withDlDevice(Device.CPU)
                    .withCopy(CopyMode.ALWAYS));
            try (NDArray c = DLPack.fromDLPack(cpu, true)) {
                assertEquals(Device.CPU, c.traits().device());
                assertArrayEquals(bytesOf(host), bytesOf(c));
            }
            assertThrows(IllegalArgumentException.class,
                    () -> DLPack.toDLPack(d, DLPackOptions.defaults().withStream(0)));
            DLPack.release(DLPack.toDLPack(d, DLPackOptions.defaults().withStream(CudaStream.PER_THREAD)), true);
        }
        assertEquals(0, DLPack.outstandingExports());
    }

    @Test
    void exhaustionIsNullAndArraysSayWhichHandlerRanOut() {
        CudaDeviceAllocator a = CudaDeviceAllocator.of(0);
        assertEquals(0, a.malloc(1L << 50).address());
        assertEquals(0, a.calloc(1L << 40, 1L << 10).address());
        DataMemHandler h = DataMemHandler.of("cuda:device=0", a);
        OutOfNativeMemoryException e = assertThrows(OutOfNativeMemoryException.class,
                () -> DataMem.callWith(h, () -> NDArray.empty(DType.INT8, 1L << 50)));
        assertTrue(e.getMessage().contains("cuda:device=0"), e.getMessage());
        assertEquals(0, a.liveBlocks());
        MemorySegment p = a.malloc(64);
        assertTrue(p.address() % CudaDeviceAllocator.BYTE_ALIGNMENT == 0);
        assertEquals(0, a.realloc(p, 64, 1L << 50).address(), "a failed realloc keeps the block");
        assertThrows(IllegalArgumentException.class, () -> a.free(p, 65), "wrong size");
        a.free(p, 64);
        assertThrows(IllegalArgumentException.class, () -> a.free(p, 64), "double free");
        assertEquals(0, a.liveBlocks());
    }

    @Test
    void aRegistrationErrorIsABackendExceptionAndGivesTheBlockBack() {
        long page = Libc.pageSize();
        CudaRegisteredAllocator first = CudaRegisteredAllocator.builder(
                DataMem.handler("aligned:" + page).allocator()).build();
        MemorySegment already = first.malloc(page);   // a registered page
        try {
            // an upstream that hands out the page CUDA has already registered
            AtomicReference<Long> freed = new AtomicReference<>(0L);
            DataMemAllocator sneaky = new DataMemAllocator() {
                @Override
                public MemorySegment malloc(long byteSize) {
                    return already;
                }

                @Override
                public MemorySegment calloc(long count, long elementByteSize) {
                    return already;
                }

                @Override
                public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
                    throw new UnsupportedOperationException();
                }

                @Override
                public void free(MemorySegment ptr, long byteSize) {
                    freed.set(byteSize);
                }

                @Override
                public MemoryTraits traits() {
                    return MemoryTraits.host(page);
                }
            };
            CudaRegisteredAllocator r = CudaRegisteredAllocator.builder(sneaky).build();
            BackendException e = assertThrows(BackendException.class, () -> r.malloc(100));
            assertEquals("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", e.codeName());
            assertEquals(page, freed.get(), "the upstream got its block back with the size it gave");
            assertEquals(0, r.liveBlocks());
        } finally {
            first.free(already, page);
        }
    }

    @Test
    void everyThreadAllocatesOnTheAllocatorsDeviceAndKeepsItsOwn() throws Exception {
        int devices = Cuda.devices().size();
        int target = devices - 1;
        CudaDeviceAllocator a = CudaDeviceAllocator.of(target);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                CudaRuntime.makeCurrent(0);
                long context0 = CudaRuntime.primaryContext(0);
                assertEquals(context0, CudaRuntime.currentContext());
                MemorySegment p = a.malloc(4096);
                CudaRuntime.PointerInfo info = CudaRuntime.pointerInfo(0, p.address());
                assertEquals(target, info.deviceOrdinal(), "allocated on the allocator's device");
                assertEquals(2, info.memoryType(), "CU_MEMORYTYPE_DEVICE");
                assertFalse(info.managed());
                assertEquals(context0, CudaRuntime.currentContext(), "the thread's context is restored");
                a.free(p, 4096);
                assertEquals(context0, CudaRuntime.currentContext(), "the thread's context is restored");
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        Assumptions.assumeTrue(devices > 1, "the device check above used device 0 only: this machine has one GPU");
    }

    @Test
    void managedMemoryAttachedToTheHostIsUsableFromTheHost() {
        CudaManagedAllocator m = CudaManagedAllocator.of(0, CudaManagedAllocator.Attach.HOST, "cuda:managed=0,attach=host");
        MemorySegment p = m.calloc(1000, 8).reinterpret(8000);
        assertEquals(0, p.get(ValueLayout.JAVA_LONG, 7992));
        p.set(ValueLayout.JAVA_LONG, 8, 42);
        assertEquals(42, p.get(ValueLayout.JAVA_LONG, 8));
        m.free(p, 8000);
        assertFalse(m.liveBlocks() > 0);
    }
}
