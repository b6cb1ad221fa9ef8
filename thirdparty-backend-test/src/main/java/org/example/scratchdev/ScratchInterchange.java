package org.example.scratchdev;

import io.datamem.Device;
import io.datamem.DeviceInterchange;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a {@link ScratchDevice} tells datamem's export protocols about its memory: the core
 * {@link DeviceInterchange} (DLPack device, stream synchronisation, copies to the host and within
 * the device) and the buffer protocol's {@link BufferDeviceHook} (the device id
 * {@value #DEVICE_ID} and a {@link StandardDeviceInfo}). One per device; the traits of the
 * device's memory carry it, and the {@code scratchdev} provider hands it to DLPack imports on the
 * device ({@code DataMemProvider.interchangeFor}).
 *
 * <p>Every block it is given must lie in a live block of its device (the start of one, or inside
 * one: a pool's block in its slab, an imported tensor's lowest element); copies are checked
 * against the device's table. It records the streams it was asked to synchronise with and counts
 * the bytes it copied, so that tests can see what exports asked of it.
 */
public final class ScratchInterchange implements DeviceInterchange, BufferDeviceHook {

    /** The buffer-protocol device id of scratch memory: this backend's package. */
    public static final String DEVICE_ID = "org.example.scratchdev";

    private final ScratchDevice device;
    private final List<OptionalLong> synchronizations = new CopyOnWriteArrayList<>();
    private final AtomicLong bytesCopiedToHost = new AtomicLong();
    private final AtomicLong bytesCopiedWithinDevice = new AtomicLong();

    ScratchInterchange(ScratchDevice device) {
        this.device = device;
    }

    /**
     * The device this hook describes.
     *
     * @return the device
     */
    public ScratchDevice device() {
        return device;
    }

    /**
     * The device of a block: its scratch device.
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return {@code (kDLExtDev, ordinal)}
     */
    @Override
    public Device dlpackDevice(MemorySegment ptr, MemoryTraits traits) {
        return device.device();
    }

    /**
     * Records the consumer's stream. A scratch device runs every copy to completion, so there is
     * nothing to order; streams are positive handles, or none for the default.
     *
     * @param ptr            the block
     * @param consumerStream a positive stream handle, or empty for the device's default
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the stream is 0 or negative
     */
    @Override
    public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        Objects.requireNonNull(ptr, "ptr");
        Objects.requireNonNull(consumerStream, "consumerStream");
        if (consumerStream.isPresent() && consumerStream.getAsLong() <= 0) {
            throw new IllegalArgumentException("stream: " + consumerStream.getAsLong() + " (expected: none, or a"
                    + " positive stream handle of " + device.name() + ")");
        }
        synchronizations.add(consumerStream);
    }

    /**
     * Copies bytes of a block to the host through {@link ScratchDevice#copyToHost}.
     *
     * @param ptr        the block
     * @param byteOffset the offset of the first byte to copy, from {@code ptr}
     * @param target     host memory of at least {@code byteSize} bytes
     * @param byteSize   the number of bytes
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the range is not inside a live block of the device, or
     *                                  {@code target} is too small
     */
    @Override
    public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
        device.copyToHost(ptr, byteOffset, target, byteSize);
        bytesCopiedToHost.addAndGet(byteSize);
    }

    /**
     * Copies bytes between two ranges of the device through {@link ScratchDevice#copyWithinDevice}.
     *
     * @param source       the block copied from
     * @param sourceOffset the offset of the first byte to copy, from {@code source}
     * @param target       the block copied to
     * @param targetOffset the offset of the first byte written, from {@code target}
     * @param byteSize     the number of bytes
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a range is not inside a live block of the device
     */
    @Override
    public void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                 long byteSize) {
        device.copyWithinDevice(source, sourceOffset, target, targetOffset, byteSize);
        bytesCopiedWithinDevice.addAndGet(byteSize);
    }

    @Override
    public String bufferDeviceId() {
        return DEVICE_ID;
    }

    /**
     * The {@code device_info} of a buffer over a block: a {@link StandardDeviceInfo} of the device,
     * with no native handles (the scratch device has none).
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return the record
     * @throws BufferException if {@code ptr} is not in a live block of the device
     */
    @Override
    public DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits) {
        if (!device.owns(ptr.address())) {
            throw new BufferException("0x" + Long.toHexString(ptr.address()) + " is not memory of " + device.name()
                    + ": no live block of the device holds it");
        }
        return new StandardDeviceInfo(device.device(), MemoryKind.DEVICE, 0, 0, 0);
    }

    /**
     * The streams exports asked this hook to synchronise with, oldest first (empty for DLPack's
     * {@code None}).
     *
     * @return a snapshot
     */
    public List<OptionalLong> synchronizations() {
        return List.copyOf(synchronizations);
    }

    /**
     * The bytes {@link #copyToHost} copied.
     *
     * @return bytes, since the JVM started
     */
    public long bytesCopiedToHost() {
        return bytesCopiedToHost.get();
    }

    /**
     * The bytes {@link #copyWithinDevice} copied.
     *
     * @return bytes, since the JVM started
     */
    public long bytesCopiedWithinDevice() {
        return bytesCopiedWithinDevice.get();
    }

    @Override
    public String toString() {
        return "ScratchInterchange[" + device.name() + "]";
    }
}
