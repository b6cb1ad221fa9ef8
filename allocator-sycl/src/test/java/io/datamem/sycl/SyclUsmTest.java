package io.datamem.sycl;

import io.datamem.BackendException;
import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.internal.Libc;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** USM allocations, pointer queries, copies, kernels and arrays on a real OpenCL runtime. */
@Tag("sycl")
class SyclUsmTest {

    private static final UsmKind[] KINDS = {UsmKind.HOST, UsmKind.SHARED, UsmKind.DEVICE};

    private static SyclUsmAllocator allocator(UsmKind kind) {
        return SyclUsmAllocator.create(kind, SyclTests.queue(kind));
    }

    private static byte[] pattern(int seed, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    private static void put(SyclQueue q, MemorySegment p, byte[] bytes) {
        q.copy(p, MemorySegment.ofArray(bytes), bytes.length);
    }

    private static byte[] get(SyclQueue q, MemorySegment p, int n) {
        byte[] out = new byte[n];
        q.copy(MemorySegment.ofArray(out), p, n);
        return out;
    }

    // ---------------------------------------------------------------------------------------------
    // Kinds and pointer queries

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void theRuntimeReportsTheKindRequestedForEveryAllocationPath(UsmKind kind) {
        SyclUsmAllocator a = allocator(kind);
        SyclQueue q = a.queue();
        List<MemorySegment> blocks = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        for (long size : new long[] {0, 1, 100, 4096, 1 << 20}) {
            blocks.add(a.malloc(size));
            sizes.add(size);
            blocks.add(a.calloc(size, 1));
            sizes.add(size);
        }
        MemorySegment r = a.realloc(a.malloc(10), 10, 5000);
        blocks.add(r);
        sizes.add(5000L);
        for (MemorySegment p : blocks) {
            assertNotEquals(0, p.address());
            assertEquals(kind, q.kindOf(p), "clGetMemAllocInfoINTEL(CL_MEM_ALLOC_TYPE_INTEL) of a " + kind + " block");
            assertEquals(kind, a.pointerInfo(p).kind());
        }
        for (int i = 0; i < blocks.size(); i++) {
            a.free(blocks.get(i), sizes.get(i));
        }
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void pointerInfoGivesKindBaseSizeAndDeviceForInteriorPointers(UsmKind kind) {
        SyclUsmAllocator a = allocator(kind);
        SyclQueue q = a.queue();
        MemorySegment p = a.malloc(10_000);
        for (long offset : new long[] {0, 1, 4096, 9_999}) {
            UsmPointerInfo info = q.pointerInfo(MemorySegment.ofAddress(p.address() + offset));
            assertEquals(kind, info.kind());
            assertEquals(p.address(), info.baseAddress(), "base of an interior pointer at +" + offset);
            assertEquals(10_000, info.byteSize());
            if (kind == UsmKind.HOST) {
                assertNull(info.device(), "host allocations belong to the context, not a device");
            } else {
                assertEquals(q.device(), info.device());
            }
            assertTrue(info.contains(p.address() + offset));
        }
        assertEquals(a.pointerInfo(p), q.pointerInfo(p), "blocks at the natural alignment are the runtime's own");
        a.free(p, 10_000);
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void overAlignedAndEmptyBlocksReportWhatTheCallerAllocated(UsmKind kind) {
        SyclQueue q = SyclTests.queue(kind);
        SyclUsmAllocator a = SyclUsmAllocator.builder(kind).queue(q).byteAlignment(1 << 16).build();
        MemorySegment p = a.malloc(1000);
        assertEquals(0, p.address() % (1 << 16));
        UsmPointerInfo mine = a.pointerInfo(MemorySegment.ofAddress(p.address() + 999));
        assertEquals(new UsmPointerInfo(kind, p.address(), 1000, mine.device()), mine);
        UsmPointerInfo runtime = q.pointerInfo(p);
        assertTrue(runtime.byteSize() > 1000, "the runtime's block is the over-allocation: " + runtime);
        assertTrue(runtime.contains(p.address()));
        MemorySegment empty = a.malloc(0);
        assertEquals(0, a.pointerInfo(empty).byteSize(), "a malloc(0) block has size 0 for its caller");
        assertEquals(kind, a.pointerInfo(empty).kind());
        a.free(empty, 0);
        a.free(p, 1000);
        assertEquals(0, a.trackedBlocks());
    }

    @Test
    void foreignAndFreedPointersAreUnknown() {
        SyclUsmAllocator a = allocator(UsmKind.SHARED);
        SyclQueue q = a.queue();
        MemorySegment m = Libc.malloc(256);
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(UsmPointerInfo.UNKNOWN, q.pointerInfo(m), "libc malloc memory");
            assertEquals(UsmKind.UNKNOWN, q.kindOf(arena.allocate(64)), "arena memory");
            assertEquals(UsmKind.UNKNOWN, q.kindOf(MemorySegment.NULL));
        } finally {
            Libc.free(m);
        }
        MemorySegment p = a.malloc(4096);
        assertEquals(UsmKind.SHARED, q.kindOf(p));
        a.free(p, 4096);
        assertEquals(UsmKind.UNKNOWN, q.kindOf(p), "a freed block");
        assertEquals(UsmPointerInfo.UNKNOWN, a.pointerInfo(p));
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void doubleAndForeignFreesAreCallerErrorsNamingTheCode(UsmKind kind) {
        SyclUsmAllocator a = allocator(kind);
        MemorySegment p = a.malloc(64);
        a.free(p, 64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.free(p, 64));
        assertTrue(e.getMessage().contains("CL_INVALID_VALUE") && e.getMessage().contains(Long.toHexString(p.address())),
                e.getMessage());
        MemorySegment m = Libc.malloc(64);
        try {
            assertThrows(IllegalArgumentException.class, () -> a.free(m, 64));
        } finally {
            Libc.free(m);
        }
        SyclUsmAllocator aligned = SyclUsmAllocator.builder(kind).queue(a.queue()).byteAlignment(4096).build();
        MemorySegment q = aligned.malloc(10);
        aligned.free(q, 10);
        assertThrows(IllegalArgumentException.class, () -> aligned.free(q, 10), "over-aligned double free");
        assertEquals(0, aligned.trackedBlocks());
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void traitsDescribeTheKindOnTheOneApiDevice(UsmKind kind) {
        SyclUsmAllocator a = allocator(kind);
        MemoryTraits t = a.traits();
        assertEquals(kind.memoryKind(), t.kind());
        assertEquals(DeviceType.ONE_API, t.device().type());
        assertEquals(a.queue().device().ordinal(), t.device().id());
        assertEquals(kind != UsmKind.DEVICE, t.hostAccessible());
        assertEquals(a.queue().device().baseAddressAlignment(), t.byteAlignment());
        MemorySegment p = a.malloc(8);
        assertEquals(t, a.traitsOf(p));
        a.free(p, 8);
    }

    // ---------------------------------------------------------------------------------------------
    // Memory operations

    @Test
    void copiesBetweenEveryPairOfKindsAndHostMemory() {
        SyclQueue q = SyclTests.queue(UsmKind.DEVICE);
        int n = 300_000;
        byte[] data = pattern(5, n);
        for (UsmKind from : KINDS) {
            for (UsmKind to : KINDS) {
                SyclUsmAllocator src = SyclUsmAllocator.create(from, q);
                SyclUsmAllocator dst = SyclUsmAllocator.create(to, q);
                MemorySegment s = src.malloc(n);
                MemorySegment d = dst.calloc(n, 1);
                put(q, s, data);
                q.copy(d, s, n);
                assertArrayEquals(data, get(q, d, n), from + " -> " + to);
                q.copy(MemorySegment.ofAddress(d.address() + 10), MemorySegment.ofAddress(s.address() + 1000), 77);
                byte[] expect = data.clone();
                System.arraycopy(data, 1000, expect, 10, 77);
                assertArrayEquals(expect, get(q, d, n), "interior copy " + from + " -> " + to);
                src.free(s, n);
                dst.free(d, n);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void fillPrefetchMigrateAndAdviseWork(UsmKind kind) {
        SyclUsmAllocator a = allocator(kind);
        SyclQueue q = a.queue();
        MemorySegment p = a.malloc(4096);
        q.fill(p, (byte) 0x5A, 4096);
        byte[] expect = new byte[4096];
        java.util.Arrays.fill(expect, (byte) 0x5A);
        assertArrayEquals(expect, get(q, p, 4096));
        try (Arena arena = Arena.ofConfined()) {
            q.fill(MemorySegment.ofAddress(p.address() + 64), arena.allocateFrom(ValueLayout.JAVA_INT, 0x01020304), 128);
        }
        byte[] got = get(q, p, 4096);
        MemorySegment view = MemorySegment.ofArray(got);
        for (int i = 0; i < 32; i++) {
            assertEquals(0x01020304, view.get(ValueLayout.JAVA_INT_UNALIGNED, 64 + 4L * i));
        }
        assertEquals(0x5A, got[63]);
        assertEquals(0x5A, got[64 + 128]);
        q.prefetch(p, 4096);
        q.migrate(p, 4096, SyclQueue.Migration.TO_HOST);
        q.migrate(p, 1024, SyclQueue.Migration.TO_HOST, SyclQueue.Migration.CONTENT_UNDEFINED);
        q.advise(p, 4096, 0);
        assertEquals(0x5A, get(q, MemorySegment.ofAddress(p.address() + 4000), 1)[0], "data survives migration");
        a.free(p, 4096);
    }

    @Test
    void memoryOperationsRejectCallerMistakesBeforeTheRuntime() {
        SyclUsmAllocator a = allocator(UsmKind.SHARED);
        SyclQueue q = a.queue();
        MemorySegment p = a.malloc(1024);
        assertThrows(IllegalArgumentException.class, () -> q.copy(p, MemorySegment.ofAddress(p.address() + 8), 100),
                "overlapping ranges");
        assertThrows(IllegalArgumentException.class, () -> q.copy(p, p, -1));
        assertThrows(IllegalArgumentException.class, () -> q.copy(MemorySegment.NULL, p, 8));
        assertThrows(IllegalArgumentException.class, () -> q.copy(p, MemorySegment.ofArray(new byte[4]), 8),
                "a sized segment bounds the copy");
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> q.fill(p, arena.allocate(3), 9), "pattern of 3 bytes");
            assertThrows(IllegalArgumentException.class, () -> q.fill(p, arena.allocate(4), 10), "not a multiple");
            assertThrows(IllegalArgumentException.class,
                    () -> q.fill(MemorySegment.ofAddress(p.address() + 2), arena.allocate(4), 8), "misaligned");
            assertThrows(IllegalArgumentException.class, () -> q.fill(p, arena.allocate(256), 256));
        }
        assertThrows(IllegalArgumentException.class, () -> q.prefetch(p, -5));
        q.copy(p, p, 0); // nothing to do
        a.free(p, 1024);
    }

    // ---------------------------------------------------------------------------------------------
    // Kernels

    private static final String KERNEL = """
            kernel void affine(global const int* in, global int* out, int n) {
                size_t i = get_global_id(0);
                if (i < n) {
                    out[i] = 3 * in[i] + 1;
                }
            }
            """;

    @Test
    void aKernelReadsAndWritesEveryKindThroughUsmPointerArguments() throws Throwable {
        SyclQueue q = SyclTests.queue(UsmKind.DEVICE);
        int n = 1000;
        long bytes = 4L * n;
        try (ClKernel k = new ClKernel(q, KERNEL, "affine")) {
            for (UsmKind inKind : KINDS) {
                for (UsmKind outKind : KINDS) {
                    SyclUsmAllocator in = SyclUsmAllocator.create(inKind, q);
                    SyclUsmAllocator out = SyclUsmAllocator.create(outKind, q);
                    MemorySegment x = in.malloc(bytes);
                    MemorySegment y = out.calloc(n, 4);
                    int[] values = new int[n];
                    for (int i = 0; i < n; i++) {
                        values[i] = i * (inKind.ordinal() + 1) - 500;
                    }
                    q.copy(x, MemorySegment.ofArray(values), bytes);
                    k.setPointer(0, x);
                    k.setPointer(1, y);
                    k.setInt(2, n);
                    k.run(n);
                    int[] result = new int[n];
                    q.copy(MemorySegment.ofArray(result), y, bytes);
                    for (int i = 0; i < n; i++) {
                        assertEquals(3 * values[i] + 1, result[i], inKind + " -> " + outKind + " at " + i);
                    }
                    in.free(x, bytes);
                    out.free(y, bytes);
                }
            }
            SyclUsmAllocator shared = SyclUsmAllocator.create(UsmKind.SHARED, q);
            MemorySegment s = shared.malloc(8);
            assertThrows(IllegalArgumentException.class, () -> k.setPointer(7, s), "no argument 7");
            shared.free(s, 8);
        }
    }

    @Test
    void hostAndSharedMemoryWrittenByTheHostIsReadByAKernelWithoutCopies() throws Throwable {
        SyclQueue q = SyclTests.queue(UsmKind.SHARED);
        int n = 256;
        try (ClKernel k = new ClKernel(q, KERNEL, "affine")) {
            SyclUsmAllocator host = SyclUsmAllocator.create(UsmKind.HOST, q);
            SyclUsmAllocator shared = SyclUsmAllocator.create(UsmKind.SHARED, q);
            MemorySegment x = host.malloc(4L * n).reinterpret(4L * n);
            MemorySegment y = shared.malloc(4L * n).reinterpret(4L * n);
            for (int i = 0; i < n; i++) {
                x.setAtIndex(ValueLayout.JAVA_INT, i, i);
            }
            k.setPointer(0, x);
            k.setPointer(1, y);
            k.setInt(2, n);
            k.run(n);
            for (int i = 0; i < n; i++) {
                assertEquals(3 * i + 1, y.getAtIndex(ValueLayout.JAVA_INT, i));
            }
            host.free(x, 4L * n);
            shared.free(y, 4L * n);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Arrays and handlers

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED"})
    void hostAndSharedArraysAreHostAccessible(UsmKind kind) {
        SyclTests.assumeRuntime(kind);
        DataMemHandler h = DataMem.handler("sycl:" + kind.dpctlName());
        try (NDArray a = DataMem.callWith(h, () -> NDArray.zeros(DType.FLOAT64, 100, 10))) {
            assertSame(h, a.handler());
            assertEquals(kind.memoryKind(), a.traits().kind());
            assertEquals(DeviceType.ONE_API, a.traits().device().type());
            a.setDouble(2.5, 99, 9);
            assertEquals(2.5, a.getDouble(99, 9));
            assertEquals(8000, a.segment().byteSize());
            SyclQueue q = ((SyclUsmAllocator) h.allocator()).queue();
            assertEquals(kind, q.kindOf(MemorySegment.ofAddress(a.address())));
            a.resize(200, 10);
            assertEquals(2.5, a.getDouble(99, 9));
            assertEquals(kind, q.kindOf(MemorySegment.ofAddress(a.address())), "resized through the handler");
        }
    }

    @Test
    void deviceArraysHaveNoHostViewAndMoveThroughTheQueue() {
        SyclTests.assumeRuntime(UsmKind.DEVICE);
        DataMemHandler h = DataMem.handler("sycl:device");
        SyclQueue q = ((SyclUsmAllocator) h.allocator()).queue();
        try (NDArray host = NDArray.empty(DType.INT32, 50, 4);
             NDArray device = DataMem.callWith(h, () -> NDArray.empty(DType.INT32, 50, 4));
             NDArray back = NDArray.zeros(DType.INT32, 50, 4)) {
            assertFalse(device.traits().hostAccessible());
            assertEquals(MemoryKind.DEVICE, device.traits().kind());
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> device.getLong(0, 0));
            assertTrue(e.getMessage().contains("SyclQueue.copy"), e.getMessage());
            assertThrows(UnsupportedOperationException.class, device::segment);
            for (int i = 0; i < 50; i++) {
                for (int j = 0; j < 4; j++) {
                    host.setLong(i * 10L + j, i, j);
                }
            }
            q.copy(device, host);
            assertEquals(UsmKind.DEVICE, q.kindOf(MemorySegment.ofAddress(device.address())));
            q.copy(back, device);
            assertEquals(493, back.getLong(49, 3));
            assertEquals(0, back.getLong(0, 0));
            assertThrows(IllegalArgumentException.class, () -> q.copy(back.transpose(), device.transpose()),
                    "strided views are not copied");
            try (NDArray other = NDArray.empty(DType.INT64, 50, 4)) {
                assertThrows(IllegalArgumentException.class, () -> q.copy(other, device), "dtypes differ");
            }
        }
    }

    @Test
    void handlerNamesTakeAKindAndAFilterSelector() {
        SyclTests.assumeRuntime(UsmKind.DEVICE);
        SyclDevice d = SyclTests.queue(UsmKind.DEVICE).device();
        DataMemHandler h = DataMem.createHandler("sycl:shared:" + d.filterString());
        SyclUsmAllocator a = (SyclUsmAllocator) h.allocator();
        assertEquals(UsmKind.SHARED, a.kind());
        assertSame(SyclQueue.of(d.filterString()), a.queue(), "one shared queue (and context) per device");
        assertEquals("sycl:shared:" + d.filterString(), a.name());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DataMem.createHandler("sycl:device:opencl:cpu:99"));
        assertTrue(e.getMessage().contains("no OpenCL device matches the filter selector 'opencl:cpu:99'"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler("sycl:texture"));
        assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler("sycl:device:level_zero:gpu"));
    }

    @Test
    void allocationErrorsNameTheHandlerAndExhaustionIsNull() {
        SyclUsmAllocator a = SyclUsmAllocator.builder(UsmKind.DEVICE).queue(SyclTests.queue(UsmKind.DEVICE))
                .name("sycl:device-test").build();
        assertEquals(0, a.malloc(a.queue().device().maxAllocByteSize() + 1).address(),
                "above CL_DEVICE_MAX_MEM_ALLOC_SIZE");
        assertEquals(0, a.malloc(1L << 50).address());
        assertThrows(IllegalArgumentException.class, () -> a.malloc(-1));
    }

    // ---------------------------------------------------------------------------------------------
    // Adopted handles

    @Test
    void adoptedHandlesShareTheContextAndAreReleasedOnClose() {
        SyclQueue shared = SyclTests.queue(UsmKind.DEVICE);
        SyclQueue own = SyclQueue.adopt(shared.contextHandle(), shared.deviceHandle(), MemorySegment.NULL);
        SyclQueue same = SyclQueue.adopt(shared.contextHandle(), shared.deviceHandle(), shared.queueHandle());
        assertTrue(own.isAdopted());
        assertEquals(shared.contextHandle(), own.contextHandle());
        assertNotEquals(shared.queueHandle().address(), own.queueHandle().address(), "a new queue was created");
        assertEquals(shared.queueHandle(), same.queueHandle());
        SyclUsmAllocator a = SyclUsmAllocator.create(UsmKind.DEVICE, own);
        MemorySegment p = a.malloc(128);
        assertEquals(UsmKind.DEVICE, shared.kindOf(p), "same context: the shared queue sees the block");
        put(own, p, pattern(1, 128));
        assertArrayEquals(pattern(1, 128), get(shared, p, 128));
        a.free(p, 128);
        own.close();
        own.close();
        same.close();
        assertTrue(own.isClosed());
        assertThrows(IllegalStateException.class, () -> a.malloc(8));
        assertThrows(IllegalStateException.class, () -> own.kindOf(p));
        MemorySegment q = SyclUsmAllocator.create(UsmKind.DEVICE, shared).malloc(8);
        assertEquals(UsmKind.DEVICE, shared.kindOf(q), "the shared queue still works after adopted ones closed");
        SyclUsmAllocator.create(UsmKind.DEVICE, shared).free(q, 8);
        shared.close(); // a no-op for shared queues
        assertFalse(shared.isClosed());
        assertThrows(IllegalArgumentException.class,
                () -> SyclQueue.adopt(MemorySegment.NULL, shared.deviceHandle(), MemorySegment.NULL));
        assertThrows(IllegalArgumentException.class, () -> SyclQueue.adopt(shared.contextHandle(),
                MemorySegment.ofAddress(shared.deviceHandle().address() + 8), MemorySegment.NULL));
    }

    @Test
    void backendErrorsCarryTheOpenClCodeName() {
        SyclQueue q = SyclTests.queue(UsmKind.SHARED);
        SyclUsmAllocator a = SyclUsmAllocator.create(UsmKind.SHARED, q);
        MemorySegment p = a.malloc(64);
        try {
            BackendException e = assertThrows(BackendException.class, () -> q.advise(p, 4096, 0),
                    "a range beyond the allocation");
            assertEquals("OpenCL", e.backend());
            assertTrue(e.codeName().startsWith("CL_INVALID_"), e.codeName());
            assertTrue(e.getMessage().contains("clEnqueueMemAdviseINTEL failed with " + e.codeName() + " ("
                    + e.code() + ") for 4096 bytes"), e.getMessage());
        } finally {
            a.free(p, 64);
        }
    }
}
