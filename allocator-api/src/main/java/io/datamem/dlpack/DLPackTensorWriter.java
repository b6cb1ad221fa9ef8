package io.datamem.dlpack;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.OutOfNativeMemoryException;
import io.datamem.array.NDArray;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** Writes the DLPack structs of an export ({@link DLPack#toDLPack}, {@link DLPackTensorAllocator}). */
final class DLPackTensorWriter {

    private DLPackTensorWriter() {
    }

    /** Writes a tensor for {@code shared}; on success the export owns {@code view} and {@code owned}. */
    static MemorySegment write(NDArray shared, long sharedAddress, Device device, DLPackVersion version, boolean versioned,
                               long flags, NDArray.Hold view, NDArray owned, long[] shape, long[] byteStrides) {
        int ndim = shape.length;
        long item = shared.dtype().itemSize();
        long header = versioned ? DLPack.DL_MANAGED_TENSOR_VERSIONED.byteSize() : DLPack.DL_MANAGED_TENSOR.byteSize();
        long byteSize = header + 16L * ndim;
        // The struct goes in a block of the export table when it fits (no malloc, no map entry: see
        // DLPackExports), else in a block of its own.
        Object holder = view != null ? view : owned;
        long token = byteSize <= DLPackExports.BLOCK_SIZE ? DLPackExports.SLOTS.acquire(holder) : -1;
        DataMemAllocator meta = null;
        long address;
        if (token != -1) {
            address = DLPackExports.SLOTS.address(token);
        } else {
            meta = DataMem.builtinDefault().allocator();
            MemorySegment raw = meta.malloc(byteSize);
            if (raw.address() == 0) {
                throw new OutOfNativeMemoryException(DataMem.builtinDefault().name(), byteSize, 16, "malloc");
            }
            address = raw.address();
        }
        MemorySegment m = MemorySegment.ofAddress(address).reinterpret(byteSize);
        long id = token != -1 ? token : DLPackExports.nextId();
        long t = versioned ? DLPack.VERSIONED_TENSOR_OFFSET : 0;
        MemorySegment shapePtr = m.asSlice(header, 8L * ndim);
        MemorySegment stridesPtr = m.asSlice(header + 8L * ndim, 8L * ndim);
        for (int i = 0; i < ndim; i++) {
            shapePtr.setAtIndex(JAVA_LONG, i, shape[i]);
            stridesPtr.setAtIndex(JAVA_LONG, i, byteStrides[i] / item);
        }
        boolean empty = shared.size() == 0;
        // CPU: data at element zero, byte_offset 0 (NumPy's form, read right by consumers that ignore
        // byte_offset); devices: data at the allocation, byte_offset to element zero (the spec's form)
        long byteOffset = empty || device.type() == DeviceType.CPU ? 0 : shared.byteOffset();
        m.set(JAVA_LONG, t, empty ? 0 : sharedAddress - byteOffset);
        m.set(JAVA_INT, t + 8, device.type().code());
        m.set(JAVA_INT, t + 12, device.id());
        m.set(JAVA_INT, t + 16, ndim);
        m.set(JAVA_BYTE, t + 20, (byte) shared.dtype().dlpackCode());
        m.set(JAVA_BYTE, t + 21, (byte) shared.dtype().dlpackBits());
        m.set(JAVA_SHORT, t + 22, (short) shared.dtype().dlpackLanes());
        m.set(ADDRESS, t + 24, shapePtr);
        m.set(ADDRESS, t + 32, stridesPtr);
        m.set(JAVA_LONG, t + 40, byteOffset);
        if (versioned) {
            m.set(JAVA_INT, 0, version.major());
            m.set(JAVA_INT, 4, version.minor());
            m.set(JAVA_LONG, 8, id);
            m.set(ADDRESS, 16, DLPackExports.DELETER);
            m.set(JAVA_LONG, 24, flags);
        } else {
            m.set(JAVA_LONG, 48, id);
            m.set(ADDRESS, 56, DLPackExports.DELETER);
        }
        if (token == -1) {
            DLPackExports.register(new DLPackExports.Export(id, view, owned, meta, m.address(), byteSize));
        }
        return m;
    }
}
