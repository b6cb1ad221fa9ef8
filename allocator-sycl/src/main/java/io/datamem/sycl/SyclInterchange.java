package io.datamem.sycl;

import io.datamem.Device;
import io.datamem.MemoryTraits;
import io.datamem.buffer.BufferException;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.DeviceInfo;
import io.datamem.DeviceInterchange;
import io.datamem.usm.SyclObject;
import io.datamem.usm.UsmHook;
import io.datamem.usm.UsmKind;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What datamem's export protocols learn about USM memory of one {@link SyclQueue}'s context: the
 * buffer device id {@value DeviceInfo#SYCL_DEVICE_ID} with a {@link SyclDeviceInfo}, DLPack's
 * {@code (kDLOneAPI, ordinal)}, the USM kind as {@code clGetMemAllocInfoINTEL} reports it, the
 * {@code syclobj} ({@link SyclObject.NativeHandles}: {@code opencl}, the {@code cl_context},
 * {@code cl_device_id} and {@code cl_command_queue}), ordering before a consumer's queue, and copies
 * to the host and within the context, all on the queue. One instance per queue, which holds it
 * ({@link SyclQueue#interchange()}), shared by the allocators on it and by imports on its device.
 */
final class SyclInterchange implements DeviceInterchange, BufferDeviceHook, UsmHook {

    private final SyclQueue queue;
    private final SyclObject.NativeHandles handles;

    /**
     * The hook of a queue's context; made once, by the queue ({@link SyclQueue#interchange()}).
     *
     * @param queue the queue, whose handles are set
     */
    SyclInterchange(SyclQueue queue) {
        this.queue = queue;
        this.handles = new SyclObject.NativeHandles(SyclObject.NativeHandles.OPENCL, queue.contextHandle().address(),
                queue.deviceHandle().address(), queue.queueHandle().address());
    }

    /**
     * The queue whose context this hook describes.
     *
     * @return the queue
     */
    SyclQueue queue() {
        return queue;
    }

    @Override
    public String bufferDeviceId() {
        return DeviceInfo.SYCL_DEVICE_ID;
    }

    /**
     * The {@code device_info} of a block: a {@link SyclDeviceInfo} with the kind the runtime reports.
     *
     * @param ptr    the block
     * @param traits its traits
     * @return the record
     * @throws BufferException       if the pointer is not USM memory of the context
     * @throws IllegalStateException if the queue is closed
     */
    @Override
    public DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits) {
        UsmKind kind = queue.kindOf(ptr);
        if (kind == UsmKind.UNKNOWN) {
            throw new BufferException("0x" + Long.toHexString(ptr.address()) + " is not USM memory of the OpenCL"
                    + " context 0x" + Long.toHexString(handles.context()) + " of " + queue
                    + " (clGetMemAllocInfoINTEL reports CL_MEM_TYPE_UNKNOWN_INTEL): no device_info can describe it");
        }
        return new SyclDeviceInfo(queue.dlpackDevice(), kind, handles.queue(), handles.context(), handles.device(),
                queue.platformHandle().address());
    }

    @Override
    public Device dlpackDevice(MemorySegment ptr, MemoryTraits traits) {
        return queue.dlpackDevice();
    }

    /**
     * Orders the block's data before a consumer's queue. datamem's own operations complete before
     * they return; work others enqueued on this queue (kernels through {@link SyclQueue#queueHandle()})
     * is waited for ({@code clFinish}) unless the consumer uses this very queue, which is in order.
     *
     * @param ptr            the block
     * @param consumerStream the consumer's {@code cl_command_queue}, or empty for none
     * @throws IllegalArgumentException if the value is 0 or negative (not a queue handle)
     * @throws IllegalStateException    if the queue is closed
     */
    @Override
    public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        if (consumerStream.isPresent() && consumerStream.getAsLong() <= 0) {
            throw new IllegalArgumentException("stream: " + consumerStream.getAsLong() + " (expected: a"
                    + " cl_command_queue handle, -1 for no synchronisation, or none, for kDLOneAPI memory)");
        }
        if (consumerStream.isPresent() && consumerStream.getAsLong() == handles.queue()) {
            checkOpen();
            return;
        }
        queue.finish();
    }

    @Override
    public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
        Objects.requireNonNull(target, "target");
        if (byteSize == 0) {
            return;
        }
        requireKnown(ptr, "source");
        queue.copy(target, MemorySegment.ofAddress(ptr.address() + byteOffset), byteSize);
    }

    @Override
    public void copyWithinDevice(MemorySegment source, long sourceOffset, MemorySegment target, long targetOffset,
                                 long byteSize) {
        if (byteSize == 0) {
            return;
        }
        requireKnown(source, "source");
        requireKnown(target, "target");
        queue.copy(MemorySegment.ofAddress(target.address() + targetOffset),
                MemorySegment.ofAddress(source.address() + sourceOffset), byteSize);
    }

    private void requireKnown(MemorySegment ptr, String name) {
        if (queue.kindOf(ptr) == UsmKind.UNKNOWN) {
            throw new IllegalArgumentException(name + ": 0x" + Long.toHexString(ptr.address()) + " (expected: USM"
                    + " memory of the OpenCL context 0x" + Long.toHexString(handles.context()) + " of " + queue
                    + "; clGetMemAllocInfoINTEL reports CL_MEM_TYPE_UNKNOWN_INTEL)");
        }
    }

    /**
     * The USM kind of a block, as {@code clGetMemAllocInfoINTEL} reports it in the queue's context
     * ({@code sycl::get_pointer_type}).
     *
     * @param ptr    the block
     * @param traits its traits (not consulted: the runtime knows)
     * @return host, shared, device, or unknown for memory that is not USM memory of the context
     * @throws IllegalStateException if the queue is closed
     */
    @Override
    public UsmKind usmKind(MemorySegment ptr, MemoryTraits traits) {
        return queue.kindOf(ptr);
    }

    /**
     * The {@code syclobj}: the OpenCL handles of the queue's context, device and queue.
     *
     * @param ptr the block
     * @return {@link SyclObject.NativeHandles} with backend {@code opencl}
     * @throws IllegalStateException if the queue is closed
     */
    @Override
    public Optional<SyclObject> syclObject(MemorySegment ptr) {
        checkOpen();
        return Optional.of(handles);
    }

    private void checkOpen() {
        if (queue.isClosed()) {
            throw new IllegalStateException(queue + " is closed: its handles are released");
        }
    }

    @Override
    public String toString() {
        return "SyclInterchange[" + queue + "]";
    }
}
