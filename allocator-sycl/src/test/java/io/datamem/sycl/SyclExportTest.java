package io.datamem.sycl;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.array.Slice;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferFlags;
import io.datamem.buffer.BufferView;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.dlpack.CopyMode;
import io.datamem.dlpack.DLPack;
import io.datamem.dlpack.DLPackOptions;
import io.datamem.spi.DataMemProvider;
import io.datamem.DeviceInterchange;
import io.datamem.sycl.provider.SyclProvider;
import io.datamem.testing.CountingAllocator;
import io.datamem.usm.SyclObject;
import io.datamem.usm.SyclUsmArrayInterface;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Exports of USM memory through the three protocols (dpctl's SYCL USM array interface, extended
 * buffers, DLPack), each field checked, the pointers and handles checked on the OpenCL side by a C
 * consumer, and round trips back through DLPack import. Every test ends with no block of its
 * allocator live and no DLPack export outstanding.
 */
@Tag("sycl")
class SyclExportTest {

    private static SyclExportProbe probe;

    @TempDir
    static Path tmp;

    private final List<CountingAllocator> counters = new ArrayList<>();
    private long exportsBefore;

    @BeforeAll
    static void compileProbe() {
        probe = SyclExportProbe.compile(tmp);
    }

    @BeforeEach
    void countExports() {
        exportsBefore = DLPack.outstandingExports();
    }

    @AfterEach
    void nothingLeaked() {
        assertEquals(exportsBefore, DLPack.outstandingExports(), "every DLPack tensor's deleter ran");
        for (CountingAllocator c : counters) {
            assertEquals(0, c.liveBlocks(), "every USM block was freed");
        }
    }

    /** A handler of a kind on the tests' queue, counting its live blocks. */
    private DataMemHandler handler(UsmKind kind) {
        SyclQueue q = SyclTests.queue(kind);
        CountingAllocator counting = new CountingAllocator(SyclUsmAllocator.builder(kind).queue(q)
                .name(SyclTests.handlerName(kind)).build());
        counters.add(counting);
        return new DataMemHandler(SyclTests.handlerName(kind), 1, counting);
    }

    private static NDArray array(DataMemHandler h, DType dtype, long... shape) {
        return DataMem.callWith(h, () -> NDArray.empty(dtype, shape));
    }

    private static SyclQueue queueOf(NDArray a) {
        return ((SyclInterchange) a.traits().interchange()).queue();
    }

    /** Writes 0, 1, 2, ... as floats into an array of any kind, through a host array and the queue. */
    private static void iota(NDArray a) {
        try (NDArray host = NDArray.empty(a.dtype(), a.shape())) {
            double[] v = new double[(int) host.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = i;
            }
            host.copyFrom(v);
            queueOf(a).copy(a, host);
        }
    }

    private static double[] values(NDArray a) {
        try (NDArray host = NDArray.empty(a.dtype(), a.shape())) {
            queueOf(a).copy(host, a);
            return host.toDoubleArray();
        }
    }

    private static SyclObject.NativeHandles handles(SyclQueue q) {
        return new SyclObject.NativeHandles("opencl", q.contextHandle().address(), q.deviceHandle().address(),
                q.queueHandle().address());
    }

    // ---------------------------------------------------------------------------------------------
    // SYCL USM array interface

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void theUsmArrayInterfaceHasDpctlsFieldsAndTheContextsOpenClHandles(UsmKind kind) {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.FLOAT32, 3, 4)) {
            SyclQueue q = queueOf(a);
            SyclUsmArrayInterface i = SyclUsmArrayInterface.of(a);
            assertEquals(List.of(3L, 4L), i.shape());
            assertEquals("<f4", i.typestr());
            assertEquals(List.of(new SyclUsmArrayInterface.TypeDescr("", "<f4")), i.typedescr());
            assertEquals(new SyclUsmArrayInterface.Data(a.address(), false), i.data());
            assertNull(i.strides(), "C order: None");
            assertEquals(0, i.offset());
            assertEquals(1, i.version());
            assertEquals(handles(q), i.syclobj());
            assertEquals(kind, q.kindOf(MemorySegment.ofAddress(i.data().pointer())),
                    "clGetMemAllocInfoINTEL: data[0] is a USM pointer of the kind, in the syclobj's context");

            Map<String, Object> m = i.toMap();
            assertEquals(SyclUsmArrayInterface.KEYS, List.copyOf(m.keySet()));
            assertEquals(List.of(3L, 4L), m.get("shape"));
            assertEquals("<f4", m.get("typestr"));
            assertEquals(List.of(List.of("", "<f4")), m.get("typedescr"));
            assertEquals(List.of(a.address(), false), m.get("data"));
            assertNull(m.get("strides"));
            assertEquals(0L, m.get("offset"));
            assertEquals(1, m.get("version"));
            assertEquals(handles(q), m.get("syclobj"));

            NDArray view = a.slice(Slice.range(1, 3), Slice.every(2));     // rows 1-2, columns 0 and 2
            SyclUsmArrayInterface v = SyclUsmArrayInterface.of(view);
            assertEquals(List.of(2L, 2L), v.shape());
            assertEquals(List.of(4L, 2L), v.strides(), "strides in elements");
            assertEquals(4, v.offset(), "elements from data[0] to [0, 0]");
            assertEquals(a.address(), v.data().pointer(), "data[0] stays the allocation");

            SyclUsmArrayInterface t = SyclUsmArrayInterface.of(a.transpose());
            assertEquals(List.of(4L, 3L), t.shape());
            assertEquals(List.of(1L, 4L), t.strides());
            assertEquals(0, t.offset());

            assertEquals(new SyclUsmArrayInterface.Data(a.address(), true), SyclUsmArrayInterface.of(a.asReadOnly()).data());
        }
    }

    @ParameterizedTest
    @CsvSource({"FLOAT64, <f8", "INT16, <i2", "UINT8, |u1", "BOOL, |b1", "COMPLEX128, <c16", "INT64, <i8"})
    void typestrAndTypedescrFollowTheDtype(String dtype, String typestr) throws Exception {
        DataMemHandler h = handler(UsmKind.DEVICE);
        DType d = (DType) DType.class.getField(dtype).get(null);
        try (NDArray a = array(h, d, 5)) {
            SyclUsmArrayInterface i = SyclUsmArrayInterface.of(a);
            assertEquals(typestr, i.typestr());
            assertEquals(List.of(new SyclUsmArrayInterface.TypeDescr("", typestr)), i.typedescr());
        }
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void theSyclobjHandlesAdoptedInCRunAKernelOnTheExportedPointer(UsmKind kind) throws Throwable {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.FLOAT32, 2, 50)) {
            iota(a);
            NDArray row = a.select(0, 1);                                   // elements 50..99
            SyclUsmArrayInterface i = SyclUsmArrayInterface.of(row);
            SyclObject.NativeHandles s = assertInstanceOf(SyclObject.NativeHandles.class, i.syclobj());
            assertEquals("opencl", s.backend());
            long first = i.data().pointer() + i.offset() * 4;
            probe.adoptAndScale(s.context(), s.device(), s.queue(), first, 50);
            double[] v = values(a);
            for (int k = 0; k < 100; k++) {
                assertEquals(k < 50 ? k : 2.0 * k + 1, v[k], "element " + k);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Extended buffers

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED"})
    void hostAndSharedMemoryAreCpuBuffersWithOrWithoutDevice(UsmKind kind) {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.FLOAT32, 8)) {
            a.copyFrom(new double[] {1, 2, 3, 4, 5, 6, 7, 8});
            for (int flags : new int[] {BufferFlags.FULL_RO, BufferFlags.FULL | BufferFlags.DEVICE}) {
                try (BufferView v = a.getBuffer(flags)) {
                    assertNull(v.device(), "host-dereferenceable memory is a CPU buffer");
                    assertNull(v.deviceInfo());
                    assertEquals(flags & BufferFlags.DEVICE, v.flags());
                    assertEquals(a.address(), v.address());
                    assertEquals(32, v.len());
                    assertEquals(DType.FLOAT32.format(), v.format());
                    assertEquals(3.0f, v.segment().getAtIndex(JAVA_FLOAT, 2), "the host reads the buffer directly");
                    assertEquals(kind, queueOf(a).kindOf(MemorySegment.ofAddress(v.address())));
                }
            }
        }
    }

    @Test
    void deviceMemoryIsRefusedAsACpuBufferAndDescribedWithDevice() throws Throwable {
        DataMemHandler h = handler(UsmKind.DEVICE);
        try (NDArray a = array(h, DType.FLOAT32, 16, 16)) {
            SyclQueue q = queueOf(a);
            BufferException e = assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.FULL_RO));
            assertEquals(BufferFlags.DEVICE, e.flag());
            assertTrue(e.getMessage().contains("DEVICE not requested"), e.getMessage());
            assertThrows(BufferException.class, () -> a.getBuffer(BufferFlags.SIMPLE));

            SyclDeviceInfo expected = new SyclDeviceInfo(q.dlpackDevice(), UsmKind.DEVICE, q.queueHandle().address(),
                    q.contextHandle().address(), q.deviceHandle().address(), q.platformHandle().address());
            try (BufferView v = a.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE);
                 Arena arena = Arena.ofConfined()) {
                assertEquals(DeviceInfo.SYCL_DEVICE_ID, v.device());
                assertEquals(BufferFlags.DEVICE, v.flags());
                assertEquals(a.address(), v.address());
                SyclDeviceInfo info = assertInstanceOf(SyclDeviceInfo.class, v.deviceInfo());
                assertEquals(expected, info);
                assertEquals(1, info.version());
                assertEquals(MemoryKind.DEVICE, info.memoryKind());
                assertEquals("opencl", info.backend());
                assertThrows(IllegalStateException.class, a::close, "the view holds the array");

                MemorySegment py = v.toNative(arena);
                assertEquals(DeviceInfo.SYCL_DEVICE_ID,
                        py.get(ADDRESS, 88).reinterpret(64).getString(0, StandardCharsets.US_ASCII));
                MemorySegment nativeInfo = py.get(ADDRESS, 96).reinterpret(SyclDeviceInfo.LAYOUT.byteSize());
                assertEquals(expected, SyclDeviceInfo.fromNative(nativeInfo));
                assertEquals(expected.toStandard(), StandardDeviceInfo.fromNative(nativeInfo),
                        "a consumer of datamem_device_info_v1 reads the common part");

                SyclExportProbe.AllocInfo c = probe.describeThroughDeviceInfo(nativeInfo, v.address());
                assertEquals(UsmKind.DEVICE, c.kind(), "C: clGetMemAllocInfoINTEL in the device_info's context");
                assertEquals(a.address(), c.base());
                assertEquals(a.byteSize(), c.byteSize());
                assertEquals(q.deviceHandle().address(), c.device());
            }
        }
    }

    @Test
    void theNativeDeviceInfoLayoutIsTheOneCompiledInC() throws Throwable {
        SyclTests.assumeRuntime(UsmKind.DEVICE);
        List<Long> expected = new ArrayList<>(List.of(SyclDeviceInfo.LAYOUT.byteSize()));
        for (var e : SyclDeviceInfo.LAYOUT.memberLayouts()) {
            expected.add(SyclDeviceInfo.LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(
                    e.name().orElseThrow())));
        }
        assertEquals(expected, Arrays.stream(probe.layout()).boxed().toList());
        assertEquals(List.of(64L, 0L, 4L, 8L, 12L, 16L, 20L, 24L, 32L, 40L, 48L, 52L, 56L), expected);
    }

    // ---------------------------------------------------------------------------------------------
    // DLPack

    @ParameterizedTest
    @CsvSource({"HOST, true", "SHARED, true", "DEVICE, true", "HOST, false", "SHARED, false", "DEVICE, false"})
    void dlpackExportsOnKdlOneApiAndImportsWithTheBackendsHook(UsmKind kind, boolean versioned) throws Throwable {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.FLOAT32, 4, 8)) {
            SyclQueue q = queueOf(a);
            iota(a);
            Device device = new Device(DeviceType.ONE_API, q.device().ordinal());
            assertEquals(device, DLPack.dlpackDevice(a));

            MemorySegment m = DLPack.toDLPack(a, versioned ? 1 : 0);
            long t = versioned ? 32 : 0;
            assertEquals(a.address(), m.get(JAVA_LONG, t), "data: the USM allocation");
            assertEquals(14, m.get(JAVA_INT, t + 8), "kDLOneAPI");
            assertEquals(q.device().ordinal(), m.get(JAVA_INT, t + 12));
            assertEquals(0L, m.get(JAVA_LONG, t + 40), "byte_offset");
            assertEquals(exportsBefore + 1, DLPack.outstandingExports());

            SyclExportProbe.TensorInfo c = probe.describeTensor(m.asSlice(t), q.contextHandle().address(),
                    q.deviceHandle().address());
            assertEquals(14, c.deviceType());
            assertEquals(q.device().ordinal(), c.deviceId());
            assertEquals(kind, c.data().kind(), "C: the tensor's data is USM memory of the kind in the context");
            assertEquals(a.address(), c.data().base());

            try (NDArray imported = DLPack.fromDLPack(m, versioned)) {
                MemoryTraits traits = imported.traits();
                assertEquals(device, traits.device());
                assertEquals(kind.memoryKind(), traits.kind(), "the USM kind is asked of the runtime");
                assertEquals(kind.hostAccessible(), traits.hostAccessible());
                assertSame(a.traits().interchange(), traits.interchange(),
                        "DataMemProvider.interchangeFor gives the hook of the device's shared queue");
                assertEquals(device, DLPack.dlpackDevice(imported));
                assertArrayEquals(values(a), values(imported), "SyclQueue copies the imported array");
                SyclUsmArrayInterface i = SyclUsmArrayInterface.of(imported);
                assertEquals(handles(q), i.syclobj());
                assertEquals(a.address(), i.data().pointer());
                if (kind.hostAccessible()) {
                    assertEquals(31.0, imported.getDouble(3, 7), "host and shared USM import host-accessible");
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED"})
    void hostAndSharedMemoryGoToACpuConsumerWithoutACopy(UsmKind kind) {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.FLOAT32, 10)) {
            iota(a);
            MemorySegment m = DLPack.toDLPack(a, DLPackOptions.defaults().withDlDevice(Device.CPU)
                    .withCopy(CopyMode.NEVER));
            assertEquals(a.address(), m.get(JAVA_LONG, 32));
            assertEquals(1, m.get(JAVA_INT, 40), "kDLCPU");
            assertEquals(0, m.get(JAVA_LONG, 24), "no flags: shared, not copied");
            DLPack.release(m, true);
        }
    }

    @Test
    void deviceMemoryGoesToACpuConsumerAsACopyMadeByTheQueue() {
        DataMemHandler h = handler(UsmKind.DEVICE);
        try (NDArray a = array(h, DType.FLOAT32, 3, 5)) {
            iota(a);
            BufferException e = assertThrows(BufferException.class, () -> DLPack.toDLPack(a,
                    DLPackOptions.defaults().withDlDevice(Device.CPU).withCopy(CopyMode.NEVER)));
            assertTrue(e.getMessage().contains("copy NEVER"), e.getMessage());
            for (NDArray source : new NDArray[] {a, a.transpose()}) {
                MemorySegment m = DLPack.toDLPack(source, DLPackOptions.defaults().withDlDevice(Device.CPU));
                assertEquals(1, m.get(JAVA_INT, 40), "kDLCPU");
                assertEquals(DLPack.FLAG_IS_COPIED, m.get(JAVA_LONG, 24));
                assertNotEquals(a.address(), m.get(JAVA_LONG, 32));
                try (NDArray copy = DLPack.fromDLPack(m, true)) {
                    assertTrue(copy.traits().hostAccessible());
                    for (int r = 0; r < 3; r++) {
                        for (int col = 0; col < 5; col++) {
                            double expected = r * 5 + col;
                            double got = source == a ? copy.getDouble(r, col) : copy.getDouble(col, r);
                            assertEquals(expected, got, "element (" + r + ", " + col + ") copied by copyToHost");
                        }
                    }
                }
            }
        }
    }

    @Test
    void streamsAreQueueHandles() {
        DataMemHandler h = handler(UsmKind.DEVICE);
        try (NDArray a = array(h, DType.INT32, 64);
             SyclQueue other = SyclQueue.adopt(queueOf(a).contextHandle(), queueOf(a).deviceHandle(),
                     MemorySegment.NULL)) {
            SyclQueue q = queueOf(a);
            for (long stream : new long[] {q.queueHandle().address(), other.queueHandle().address(), -1}) {
                DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults().withStream(stream)), true);
            }
            DLPack.release(DLPack.toDLPack(a, DLPackOptions.defaults()), true);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DLPack.toDLPack(a, DLPackOptions.defaults().withStream(0)));
            assertTrue(e.getMessage().contains("cl_command_queue"), e.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> a.traits().interchange().synchronize(MemorySegment.ofAddress(a.address()), OptionalLong.of(-5)));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The hook itself

    @ParameterizedTest
    @EnumSource(value = UsmKind.class, names = {"HOST", "SHARED", "DEVICE"})
    void theHookCopiesToTheHostAndWithinTheContext(UsmKind kind) {
        DataMemHandler h = handler(kind);
        try (NDArray a = array(h, DType.INT32, 32);
             NDArray b = array(h, DType.INT32, 32);
             Arena arena = Arena.ofConfined()) {
            iota(a);
            SyclInterchange hook = assertInstanceOf(SyclInterchange.class, a.traits().interchange());
            assertSame(hook, a.traits().hook(io.datamem.buffer.BufferDeviceHook.class).orElseThrow());
            assertSame(hook, a.traits().hook(io.datamem.usm.UsmHook.class).orElseThrow());
            assertEquals(DeviceInfo.SYCL_DEVICE_ID, hook.bufferDeviceId());
            MemorySegment block = MemorySegment.ofAddress(a.address());
            assertEquals(kind, hook.usmKind(block, a.traits()));
            MemorySegment host = arena.allocate(16);
            hook.copyToHost(block, 8, host, 16);
            assertArrayEquals(new int[] {2, 3, 4, 5}, host.toArray(JAVA_INT));
            hook.copyWithinDevice(block, 4, MemorySegment.ofAddress(b.address()), 0, 31 * 4);
            double[] got = values(b);
            for (int i = 0; i < 31; i++) {
                assertEquals(i + 1, got[i]);
            }
            hook.copyToHost(block, 0, host, 0);
            MemorySegment foreign = arena.allocate(64);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> hook.copyToHost(foreign, 0, host, 16));
            assertTrue(e.getMessage().contains("CL_MEM_TYPE_UNKNOWN_INTEL"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> hook.copyWithinDevice(block, 0, foreign, 0, 16));
            assertThrows(BufferException.class, () -> hook.deviceInfo(foreign, a.traits()));
            assertEquals(UsmKind.UNKNOWN, hook.usmKind(foreign, a.traits()));
        }
    }

    @Test
    void aKdlOneApiTensorOfAPointerTheContextDoesNotKnowImportsAsDeviceMemoryAndIsNotExported() {
        SyclQueue q = SyclTests.queue(UsmKind.DEVICE);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(64, 64);
            MemorySegment shape = arena.allocateFrom(JAVA_LONG, 16);
            MemorySegment m = arena.allocate(DLPack.DL_MANAGED_TENSOR_VERSIONED);
            m.set(JAVA_INT, 0, 1);                          // version 1.1, no manager, NULL deleter, no flags
            m.set(JAVA_INT, 4, 1);
            m.set(ADDRESS, 32, data);
            m.set(JAVA_INT, 40, 14);                        // kDLOneAPI
            m.set(JAVA_INT, 44, q.device().ordinal());
            m.set(JAVA_INT, 48, 1);                         // ndim
            m.set(JAVA_BYTE, 52, (byte) 2);                 // kDLFloat 32 x 1
            m.set(JAVA_BYTE, 53, (byte) 32);
            m.set(JAVA_SHORT, 54, (short) 1);
            m.set(ADDRESS, 56, shape);
            try (NDArray imported = DLPack.fromDLPack(m, true)) {
                assertEquals(MemoryKind.DEVICE, imported.traits().kind(), "unknown to the context: device memory");
                assertInstanceOf(SyclInterchange.class, imported.traits().interchange());
                BufferException e = assertThrows(BufferException.class, () -> SyclUsmArrayInterface.of(imported));
                assertTrue(e.getMessage().contains("unknown"), e.getMessage());
                assertThrows(BufferException.class,
                        () -> imported.getBuffer(BufferFlags.FULL_RO | BufferFlags.DEVICE));
            }
        }
    }

    @Test
    void theProviderAnswersForKdlOneApiDevicesWithUsmOnly() {
        SyclQueue q = SyclTests.queue(UsmKind.DEVICE);
        DataMemProvider p = new SyclProvider();
        Optional<DeviceInterchange> hook = p.interchangeFor(q.dlpackDevice());
        assertSame(q.interchange(), hook.orElseThrow());
        assertTrue(p.interchangeFor(new Device(DeviceType.ONE_API, SyclQueue.devices().size())).isEmpty());
        assertTrue(p.interchangeFor(new Device(DeviceType.CUDA, q.device().ordinal())).isEmpty());
        assertTrue(p.interchangeFor(Device.CPU).isEmpty());
    }

    @Test
    void aClosedAdoptedQueuesHookRefusesToDescribeItsMemory() {
        SyclQueue shared = SyclTests.queue(UsmKind.DEVICE);
        SyclQueue adopted = SyclQueue.adopt(shared.contextHandle(), shared.deviceHandle(), MemorySegment.NULL);
        SyclInterchange hook = (SyclInterchange) adopted.interchange();
        assertEquals(new SyclObject.NativeHandles("opencl", shared.contextHandle().address(),
                shared.deviceHandle().address(), adopted.queueHandle().address()),
                hook.syclObject(MemorySegment.NULL).orElseThrow());
        adopted.close();
        assertThrows(IllegalStateException.class, () -> hook.syclObject(MemorySegment.NULL));
        assertThrows(IllegalStateException.class, () -> hook.usmKind(MemorySegment.ofAddress(1), null));
        assertNotEquals(hook, shared.interchange());
    }
}
