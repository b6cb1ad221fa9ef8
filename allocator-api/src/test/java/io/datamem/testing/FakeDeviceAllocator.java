package io.datamem.testing;

import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.DeviceInterchange;
import io.datamem.usm.SyclObject;
import io.datamem.usm.UsmHook;
import io.datamem.usm.UsmKind;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test allocator whose traits claim device memory (CUDA, SYCL USM host/shared/device, ...) while
 * handing out ordinary host memory from an upstream, with a {@link DeviceInterchange} that
 * records what exports ask of it. Device backends are proven against exports with it on machines
 * without the hardware: nothing here dereferences "device" memory except {@link #copyToHost}, which
 * stands for the backend's copy.
 */
public final class FakeDeviceAllocator implements DataMemAllocator, DeviceInterchange, BufferDeviceHook, UsmHook {

    /** The stream handle {@link #deviceInfo} reports. */
    public static final long STREAM = 0x5151;
    /** The context handle {@link #deviceInfo} reports. */
    public static final long CONTEXT = 0xC0C0;
    /** The device handle {@link #deviceInfo} reports. */
    public static final long DEVICE_HANDLE = 0xDE01;
    /** The queue handle SYCL fakes name as their {@code syclobj}. */
    public static final long QUEUE = 0x5EC1;

    private final DataMemAllocator upstream;
    private final String deviceId;
    private final Device device;
    private final MemoryKind kind;
    private final UsmKind usmKind;
    private final List<OptionalLong> synchronizations = new CopyOnWriteArrayList<>();
    private final AtomicLong copiedBytes = new AtomicLong();
    private final AtomicLong deviceCopiedBytes = new AtomicLong();

    /**
     * A fake device allocator.
     *
     * @param upstream the host allocator behind it
     * @param deviceId the buffer device id to report, for example {@code io.datamem.cuda}
     * @param device   the device to claim
     * @param kind     the memory kind to claim (DEVICE makes it not host-accessible)
     */
    public FakeDeviceAllocator(DataMemAllocator upstream, String deviceId, Device device, MemoryKind kind) {
        this.upstream = upstream;
        this.deviceId = deviceId;
        this.device = device;
        this.kind = kind;
        this.usmKind = UsmKind.of(kind);
    }

    /** CUDA device memory on device 1. */
    public static FakeDeviceAllocator cudaDevice(DataMemAllocator upstream) {
        return new FakeDeviceAllocator(upstream, DeviceInfo.CUDA_DEVICE_ID, new Device(DeviceType.CUDA, 1),
                MemoryKind.DEVICE);
    }

    /** SYCL USM memory of a kind on oneAPI device 0. */
    public static FakeDeviceAllocator sycl(DataMemAllocator upstream, MemoryKind kind) {
        return new FakeDeviceAllocator(upstream, DeviceInfo.SYCL_DEVICE_ID, new Device(DeviceType.ONE_API, 0), kind);
    }

    @Override
    public MemorySegment malloc(long byteSize) {
        return upstream.malloc(byteSize);
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        return upstream.calloc(count, elementByteSize);
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        return upstream.realloc(ptr, oldByteSize, newByteSize);
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        upstream.free(ptr, byteSize);
    }

    @Override
    public MemoryTraits traits() {
        MemoryTraits u = upstream.traits();
        return new MemoryTraits(kind, device, kind.hostAccessible(), u.byteAlignment(), u.pageSize(), this);
    }

    @Override
    public String bufferDeviceId() {
        return deviceId;
    }

    @Override
    public DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits) {
        return new StandardDeviceInfo(device, kind, STREAM, CONTEXT, DEVICE_HANDLE);
    }

    @Override
    public Device dlpackDevice(MemorySegment ptr, MemoryTraits traits) {
        return device;
    }

    @Override
    public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        if (device.type() == DeviceType.CUDA && consumerStream.isPresent() && consumerStream.getAsLong() == 0) {
            throw new IllegalArgumentException("stream: 0 (expected: 1, 2 or a stream handle for CUDA)");
        }
        synchronizations.add(consumerStream);
    }

    @Override
    public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
        MemorySegment.copy(ptr.reinterpret(byteOffset + byteSize), byteOffset, target, 0, byteSize);
        copiedBytes.addAndGet(byteSize);
    }

    @Override
    public void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                 long byteSize) {
        MemorySegment.copy(source.reinterpret(sourceOffset + byteSize), sourceOffset,
                target.reinterpret(targetOffset + byteSize), targetOffset, byteSize);
        deviceCopiedBytes.addAndGet(byteSize);
    }

    @Override
    public UsmKind usmKind(MemorySegment ptr, MemoryTraits traits) {
        return usmKind;
    }

    @Override
    public Optional<SyclObject> syclObject(MemorySegment ptr) {
        return device.type() == DeviceType.ONE_API ? Optional.of(new SyclObject.Queue(QUEUE)) : Optional.empty();
    }

    /** The streams exports asked to synchronise with, in order. */
    public List<OptionalLong> synchronizations() {
        return List.copyOf(synchronizations);
    }

    /** Bytes copied to the host. */
    public long copiedBytes() {
        return copiedBytes.get();
    }

    /** Bytes copied within the "device" ({@link #copyWithinDevice}). */
    public long deviceCopiedBytes() {
        return deviceCopiedBytes.get();
    }
}
