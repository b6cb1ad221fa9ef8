package io.datamem.cuda;

import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.array.DType;
import io.datamem.array.NDArray;
import io.datamem.cuda.internal.CudaInterchange;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.spi.ReleasingAllocator;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;

/**
 * CUDA IPC handles: device memory of one process opened by another on the same host without a
 * copy ({@code cuIpcGetMemHandle} / {@code cuIpcOpenMemHandle}), the device-memory counterpart of
 * the {@code shared} allocator's handles ({@code docs/ipc.md}).
 *
 * <p>The exporter takes {@link #handleOf(NDArray)} of an array of CUDA device memory
 * ({@code cuda:device=N}, or a pool over it: the handle names the driver allocation that holds the
 * array and the array's offset in it) and sends {@link Handle#toBytes()} to another process by any
 * means. The importer calls {@link #open(Handle, DType, long...)}, which maps the allocation once
 * per process and counts the arrays over it (a second open of the same allocation costs a map
 * lookup); the last array's close unmaps it.
 *
 * <p>Lifetime: CUDA leaves freeing exported memory while another process has it open undefined,
 * and datamem cannot see the other process: the exporter keeps its array open until every
 * importer has closed its arrays (as {@code docs/cuda.md} says). A handle of freed memory, of this
 * process's own memory, or a forged one is refused by the driver, which this class reports as a
 * {@link io.datamem.BackendException} naming the call; it never maps other memory.
 */
public final class CudaIpc {

    /** The handler name of opened arrays. */
    public static final String HANDLER_NAME = "cuda-ipc";

    private static final Map<Key, Mapping> MAPPINGS = new HashMap<>();

    private CudaIpc() {
    }

    /**
     * A CUDA IPC handle of an array's bytes: the driver's 64-byte handle of the allocation that
     * holds them, their offset in it and their length.
     *
     * @param device   the CUDA device ordinal
     * @param handle   the driver's {@code CUipcMemHandle}, 64 bytes (copied)
     * @param offset   the bytes' offset in the allocation
     * @param byteSize their length
     */
    public record Handle(int device, byte[] handle, long offset, long byteSize) {

        /** The length of {@link #toBytes()}. */
        public static final int WIRE_BYTES = 8 + 4 + 4 + 8 + 8 + 64;

        private static final long MAGIC = 0x3143504955434d44L;   // "DMCUIPC1", little-endian

        /**
         * Validates and copies.
         *
         * @throws NullPointerException     if {@code handle} is null
         * @throws IllegalArgumentException if the device, offset or size is negative, or the handle
         *                                  is not 64 bytes
         */
        public Handle {
            Objects.requireNonNull(handle, "handle");
            if (device < 0 || offset < 0 || byteSize < 0 || handle.length != 64) {
                throw new IllegalArgumentException("CUDA IPC handle: device " + device + ", offset " + offset
                        + ", byteSize " + byteSize + ", " + handle.length + "-byte handle (expected: non-negative"
                        + " device, offset and size, and the driver's 64-byte CUipcMemHandle)");
            }
            handle = handle.clone();
        }

        /**
         * The driver's handle.
         *
         * @return a copy of its 64 bytes
         */
        @Override
        public byte[] handle() {
            return handle.clone();
        }

        /**
         * The handle as bytes to send: a magic number, the device, the offset, the size and the
         * driver's handle, little-endian.
         *
         * @return {@value #WIRE_BYTES} bytes
         */
        public byte[] toBytes() {
            ByteBuffer b = ByteBuffer.allocate(WIRE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(MAGIC).putInt(device).putInt(0).putLong(offset).putLong(byteSize).put(handle);
            return b.array();
        }

        /**
         * Reads what {@link #toBytes()} wrote.
         *
         * @param bytes the bytes received
         * @return the handle
         * @throws NullPointerException     if {@code bytes} is null
         * @throws IllegalArgumentException if they are not {@value #WIRE_BYTES} bytes of a handle
         *                                  (another length, another magic number, a reserved field
         *                                  set, a negative device, offset or size)
         */
        public static Handle fromBytes(byte[] bytes) {
            Objects.requireNonNull(bytes, "bytes");
            if (bytes.length != WIRE_BYTES) {
                throw new IllegalArgumentException("CUDA IPC handle: " + bytes.length + " bytes (expected: "
                        + WIRE_BYTES + ")");
            }
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            long magic = b.getLong();
            int device = b.getInt();
            int reserved = b.getInt();
            if (magic != MAGIC || reserved != 0) {
                throw new IllegalArgumentException("CUDA IPC handle: not a datamem CUDA IPC handle (magic 0x"
                        + Long.toHexString(magic) + ", reserved " + reserved + "; expected: 0x"
                        + Long.toHexString(MAGIC) + ", 0)");
            }
            long offset = b.getLong();
            long byteSize = b.getLong();
            byte[] handle = new byte[64];
            b.get(handle);
            return new Handle(device, handle, offset, byteSize);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Handle h && h.device == device && h.offset == offset && h.byteSize == byteSize
                    && Arrays.equals(h.handle, handle);
        }

        @Override
        public int hashCode() {
            return Objects.hash(device, offset, byteSize, Arrays.hashCode(handle));
        }

        @Override
        public String toString() {
            return "CudaIpc.Handle[device " + device + ", offset " + offset + ", " + byteSize + " bytes, handle "
                    + HexFormat.of().formatHex(handle, 0, 8) + "...]";
        }
    }

    /**
     * The IPC handle of an array of CUDA device memory, taken with the array pinned.
     *
     * @param array a C-contiguous array of CUDA device memory
     * @return its handle
     * @throws NullPointerException        if {@code array} is null
     * @throws IllegalStateException       if the array is closed, or CUDA is unavailable here (the
     *                                     message says why)
     * @throws IllegalArgumentException    if the array is not CUDA device memory (pinned and managed
     *                                     memory have no IPC handle) or not C-contiguous
     * @throws io.datamem.BackendException if the driver refuses
     */
    public static Handle handleOf(NDArray array) {
        Objects.requireNonNull(array, "array");
        MemoryTraits traits = array.traits();
        if (traits.kind() != MemoryKind.DEVICE || traits.device().type() != DeviceType.CUDA) {
            throw new IllegalArgumentException("CUDA IPC handles exist for CUDA device memory (cuda:device=N, or a"
                    + " pool over it); " + array + " is " + traits.kind() + " memory on " + traits.device());
        }
        if (!array.isCContiguous()) {
            throw new IllegalArgumentException(array + " is not C-contiguous: copy it first (an IPC handle names one"
                    + " run of bytes)");
        }
        CudaRuntime.require();
        int device = traits.device().id();
        try (NDArray.Hold _ = array.hold()) {
            long address = array.address();
            long byteSize = array.size() * array.dtype().itemSize();
            long[] range = CudaRuntime.addressRange(device, address);
            if (address - range[0] + byteSize > range[1]) {
                throw new IllegalStateException(array + " reaches past its driver allocation [0x"
                        + Long.toHexString(range[0]) + ", +" + range[1] + ")");
            }
            return new Handle(device, CudaRuntime.ipcGetMemHandle(device, range[0]), address - range[0], byteSize);
        }
    }

    /**
     * Opens another process's handle as an array over the same device memory. The allocation is
     * mapped once per process: a second open of it only counts another array; closing the last
     * array over it unmaps it ({@code cuIpcCloseMemHandle}).
     *
     * @param handle the exporter's handle
     * @param dtype  the element type
     * @param shape  the shape; its bytes must fit in the handle's
     * @return a C-contiguous array of CUDA device memory, handler {@value #HANDLER_NAME}
     * @throws NullPointerException        if an argument is null
     * @throws IllegalArgumentException    if the shape's bytes exceed the handle's, or the shape is
     *                                     invalid
     * @throws IllegalStateException       if CUDA is unavailable here
     * @throws io.datamem.BackendException if the driver refuses the handle (this process's own
     *                                     memory, freed memory, a forged handle)
     */
    public static NDArray open(Handle handle, DType dtype, long... shape) {
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(shape, "shape");
        long count = 1;
        for (long n : shape) {
            if (n < 0) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " (expected: non-negative)");
            }
            count = Math.multiplyExact(count, n);
        }
        long bytes = Math.multiplyExact(count, dtype.itemSize());
        if (bytes > handle.byteSize()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " is " + bytes
                    + " bytes, more than the handle's " + handle.byteSize());
        }
        CudaRuntime.require();
        Mapping mapping = acquire(handle);
        Device device = new Device(DeviceType.CUDA, handle.device());
        long address = mapping.base + handle.offset();
        MemoryTraits traits = new MemoryTraits(MemoryKind.DEVICE, device, false, Long.lowestOneBit(address | 256),
                io.datamem.internal.Libc.pageSize()).withInterchange(CudaInterchange.of(MemoryKind.DEVICE,
                handle.device()));
        ReleasingAllocator lease = ReleasingAllocator.of(HANDLER_NAME, () -> "another process's CUDA memory it"
                + " opened (" + handle + ")", traits, () -> release(mapping));
        try {
            return NDArray.adopt(new DataMemHandler(HANDLER_NAME, 1, lease), MemorySegment.ofAddress(address), bytes,
                    dtype, shape, null, 0);
        } catch (RuntimeException | Error e) {
            lease.free(MemorySegment.NULL, 0);
            throw e;
        }
    }

    /**
     * The allocations this process has open, for leak checks.
     *
     * @return mapped allocations
     */
    public static int openMappings() {
        synchronized (MAPPINGS) {
            return MAPPINGS.size();
        }
    }

    private record Key(int device, String handle) {
    }

    private static final class Mapping {
        final Key key;
        final int device;
        final long base;
        int arrays;

        Mapping(Key key, int device, long base) {
            this.key = key;
            this.device = device;
            this.base = base;
        }
    }

    private static Mapping acquire(Handle handle) {
        Key key = new Key(handle.device(), HexFormat.of().formatHex(handle.handle));
        synchronized (MAPPINGS) {
            Mapping m = MAPPINGS.get(key);
            if (m == null) {
                m = new Mapping(key, handle.device(), CudaRuntime.ipcOpenMemHandle(handle.device(), handle.handle));
                MAPPINGS.put(key, m);
            }
            m.arrays++;
            return m;
        }
    }

    private static void release(Mapping m) {
        synchronized (MAPPINGS) {
            if (--m.arrays > 0) {
                return;
            }
            MAPPINGS.remove(m.key);
        }
        CudaRuntime.ipcCloseMemHandle(m.device, m.base);
    }
}
