package io.datamem.cuda.internal;

import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.internal.Libc;
import io.datamem.DeviceInterchange;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What datamem's export protocols learn about CUDA memory: the buffer device id
 * {@value DeviceInfo#CUDA_DEVICE_ID}, a {@link StandardDeviceInfo} (device, memory kind, the stream
 * the data was last used on, the primary context and the {@code CUdevice}), DLPack's
 * {@code kDLCUDA}/{@code kDLCUDAHost}/{@code kDLCUDAManaged} device, synchronisation with a
 * consumer's stream, and copies to the host and within device memory. One instance per memory kind
 * and device. Internal.
 */
public final class CudaInterchange implements DeviceInterchange, BufferDeviceHook {

    private static final ConcurrentHashMap<Integer, CudaInterchange> INSTANCES = new ConcurrentHashMap<>();

    private final MemoryKind kind;
    private final Device device;

    private CudaInterchange(MemoryKind kind, Device device) {
        this.kind = kind;
        this.device = device;
    }

    /**
     * The hook for a memory kind on a device.
     *
     * @param kind    {@link MemoryKind#DEVICE}, {@link MemoryKind#HOST_PINNED} or {@link MemoryKind#MANAGED}
     * @param ordinal the device ordinal
     * @return the shared instance
     * @throws IllegalArgumentException if {@code kind} is {@link MemoryKind#HOST} or the ordinal is negative
     */
    public static CudaInterchange of(MemoryKind kind, int ordinal) {
        Device d = device(kind, ordinal);
        return INSTANCES.computeIfAbsent(kind.ordinal() * 65536 + ordinal, k -> new CudaInterchange(kind, d));
    }

    /**
     * The DLPack device of CUDA memory of a kind.
     *
     * @param kind    the memory kind
     * @param ordinal the device ordinal
     * @return {@code (kDLCUDA, n)} for device memory, {@code (kDLCUDAHost, n)} for pinned and
     *         registered host memory, {@code (kDLCUDAManaged, n)} for managed memory
     * @throws IllegalArgumentException if {@code kind} is {@link MemoryKind#HOST}, or the ordinal is negative
     */
    public static Device device(MemoryKind kind, int ordinal) {
        Objects.requireNonNull(kind, "kind");
        DeviceType type = switch (kind) {
            case DEVICE -> DeviceType.CUDA;
            case HOST_PINNED -> DeviceType.CUDA_HOST;
            case MANAGED -> DeviceType.CUDA_MANAGED;
            case HOST -> throw new IllegalArgumentException("kind: HOST (expected: DEVICE, HOST_PINNED or MANAGED"
                    + " for CUDA memory)");
        };
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal: " + ordinal + " (expected: >= 0)");
        }
        return new Device(type, ordinal);
    }

    /**
     * The traits of CUDA memory of a kind, with this backend's hook attached.
     *
     * @param kind          the memory kind
     * @param ordinal       the device ordinal
     * @param byteAlignment the alignment every block has
     * @param pageSize      the page size backing it
     * @return the traits; host-accessible for every kind but {@link MemoryKind#DEVICE}
     * @throws IllegalArgumentException if {@code kind} is {@link MemoryKind#HOST}, the ordinal is
     *                                  negative, or a size is not a power of two
     */
    public static MemoryTraits traits(MemoryKind kind, int ordinal, long byteAlignment, long pageSize) {
        return new MemoryTraits(kind, device(kind, ordinal), kind.hostAccessible(), byteAlignment, pageSize,
                of(kind, ordinal));
    }

    /**
     * The page size of CUDA memory of a kind: the host page size for memory the host maps, 2 MiB
     * (the large pages the GPU maps {@code cuMemAlloc} memory with) for device memory.
     *
     * @param kind the memory kind
     * @return bytes
     */
    public static long pageSize(MemoryKind kind) {
        return kind == MemoryKind.DEVICE ? 2L << 20 : Libc.pageSize();
    }

    /**
     * The memory kind this hook describes.
     *
     * @return the kind
     */
    public MemoryKind kind() {
        return kind;
    }

    /**
     * The device this hook describes.
     *
     * @return the DLPack device
     */
    public Device device() {
        return device;
    }

    @Override
    public String bufferDeviceId() {
        return DeviceInfo.CUDA_DEVICE_ID;
    }

    @Override
    public DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits) {
        StreamRecords.Entry e = StreamRecords.global().get(ptr.address());
        int ordinal = device.id();
        long context = 0;
        long deviceHandle = 0;
        if (CudaRuntime.availability().available()) {   // else: described without handles, nothing loaded
            context = CudaRuntime.primaryContext(ordinal);
            deviceHandle = CudaDriver.open().deviceHandle(ordinal);
        }
        return new StandardDeviceInfo(device, kind, e == null ? 0 : e.stream(), context, deviceHandle);
    }

    @Override
    public Device dlpackDevice(MemorySegment ptr, MemoryTraits traits) {
        return device;
    }

    /**
     * Orders the data before the consumer's stream, as DLPack asks of producers: the consumer's
     * stream waits (on the device, without blocking the host) for an event recorded after the last
     * work datamem enqueued on the block, or, if none is recorded, after the work already on the
     * legacy default stream. Nothing is done when the consumer uses the stream the work is on.
     *
     * @param ptr            the block
     * @param consumerStream the consumer's stream (empty: the legacy default stream)
     * @throws IllegalArgumentException for 0 and negative values other than -1
     */
    @Override
    public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        long consumer = DLPackStreams.consumerStream(consumerStream);   // validated before any native call
        StreamRecords.Entry e = StreamRecords.global().get(ptr.address());
        long producer = e == null ? 0 : e.stream();
        if (!DLPackStreams.needsWait(producer, consumer)) {
            return;
        }
        int ordinal = device.id();
        CudaRuntime.require();
        if (e != null) {
            CudaRuntime.waitEvent(ordinal, consumer, e.event());
            return;
        }
        long event = CudaRuntime.createEvent(ordinal);
        try {
            CudaRuntime.recordEvent(ordinal, event, DLPackStreams.LEGACY);
            CudaRuntime.waitEvent(ordinal, consumer, event);
        } finally {
            CudaRuntime.destroyEvent(ordinal, event);   // released once it has completed
        }
    }

    @Override
    public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
        checkNative(target, "target");
        if (byteSize == 0) {
            return;
        }
        CudaRuntime.require();
        StreamRecords.global().await(ptr.address());
        CudaRuntime.copy(device.id(), ptr.address() + byteOffset, side(), target.address(), CudaRuntime.Side.PAGEABLE,
                byteSize);
    }

    @Override
    public void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                 long byteSize) {
        if (byteSize == 0) {
            return;
        }
        CudaRuntime.require();
        StreamRecords.global().await(source.address());
        StreamRecords.global().awaitAndClear(target.address());
        CudaRuntime.copy(device.id(), source.address() + sourceOffset, side(), target.address() + targetOffset, side(),
                byteSize);
    }

    /**
     * Where this hook's memory is for copies.
     *
     * @return {@link CudaRuntime.Side#PINNED} for pinned and registered memory, else
     *         {@link CudaRuntime.Side#DEVICE} (device and managed memory)
     */
    public CudaRuntime.Side side() {
        return kind == MemoryKind.HOST_PINNED ? CudaRuntime.Side.PINNED : CudaRuntime.Side.DEVICE;
    }

    private static void checkNative(MemorySegment segment, String name) {
        if (!segment.isNative()) {
            throw new IllegalArgumentException(name + ": a heap segment (expected: native memory CUDA can copy to)");
        }
    }

    @Override
    public String toString() {
        return "CudaInterchange[" + kind + " on " + device + "]";
    }
}
