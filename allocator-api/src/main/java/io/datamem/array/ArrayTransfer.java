package io.datamem.array;

import io.datamem.internal.Strides;

import java.lang.foreign.MemorySegment;
import java.util.function.LongConsumer;

/**
 * Copies between arrays on the host: {@link #transfer} (one bulk copy for equal C-contiguous
 * layouts, a snapshot first when the memory overlaps, otherwise element by element in C order,
 * converting between dtypes as {@link ElementCodec} does), and {@link #forEachOffset}, the C-order
 * walk over a strided layout that the fills, the array copies and {@code toDoubleArray} use. Each
 * array's segments come from its own lifecycle-checked accessors ({@code hostData()},
 * {@code segment()}), and a failure from a closed array is reported as its closing.
 */
final class ArrayTransfer {

    private ArrayTransfer() {
    }

    /** Copies src into dst element by element in C order; both have the same size. */
    static void transfer(NDArray src, NDArray dst) {
        MemorySegment from = src.hostData();
        MemorySegment to = dst.hostData();
        if (src.size() == 0) {
            return;
        }
        DType srcType = src.dtype();
        DType dstType = dst.dtype();
        try {
            if (srcType.equals(dstType) && src.isCContiguous() && dst.isCContiguous()) {
                MemorySegment.copy(from, src.origin, to, dst.origin, src.byteSize());
                return;
            }
            if (extent(src, from).asOverlappingSlice(extent(dst, to)).isPresent()) {
                // Read everything first: a strided copy onto itself would read values already overwritten.
                MemorySegment heap = MemorySegment.ofArray(new long[(int) Math.ceilDiv(src.byteSize(), 8)]);
                NDArray snapshot = NDArray.wrap(heap.asSlice(0, src.byteSize()), srcType, src.shape());
                transfer(src, snapshot);
                transfer(snapshot, dst);
                return;
            }
            long[] offsets = new long[(int) Math.min(src.size(), Integer.MAX_VALUE - 8)];
            if (offsets.length != src.size()) {
                throw new IllegalStateException("arrays of more than " + offsets.length
                        + " elements with different layouts are copied in pieces; use same-layout copies");
            }
            int[] n = {0};
            src.forEachOffset(o -> offsets[n[0]++] = o);
            n[0] = 0;
            DType.Kind sk = srcType.kind();
            DType.Kind dk = dstType.kind();
            boolean sameType = srcType.equals(dstType);
            if (!sameType && (sk == DType.Kind.CUSTOM || dk == DType.Kind.CUSTOM)) {
                throw new UnsupportedOperationException("cannot convert between " + srcType + " and " + dstType);
            }
            int item = srcType.itemSize();
            dst.forEachOffset(o -> {
                long so = offsets[n[0]++];
                if (sameType) {
                    MemorySegment.copy(from, so, to, o, item);
                } else if (sk == DType.Kind.COMPLEX) {
                    double[] c = ElementCodec.readComplex(srcType, from, so);
                    if (dk == DType.Kind.COMPLEX) {
                        ElementCodec.writeComplex(dstType, to, o, c[0], c[1]);
                    } else if (c[1] != 0) {
                        throw new IllegalArgumentException("cannot copy complex value " + c[0] + "+" + c[1]
                                + "j into real dtype " + dstType + " without losing its imaginary part");
                    } else {
                        ElementCodec.writeDouble(dstType, to, o, c[0]);
                    }
                } else if ((sk == DType.Kind.SIGNED || sk == DType.Kind.UNSIGNED || sk == DType.Kind.BOOL)
                        && (dk == DType.Kind.SIGNED || dk == DType.Kind.UNSIGNED || dk == DType.Kind.BOOL)) {
                    ElementCodec.writeLong(dstType, to, o, ElementCodec.readLong(srcType, from, so));
                } else {
                    ElementCodec.writeDouble(dstType, to, o, ElementCodec.readDouble(srcType, from, so));
                }
            });
        } catch (IllegalStateException | WrongThreadException e) {
            throw (src.isClosed() || e instanceof WrongThreadException && !src.isShared() ? src : dst).failed(e);
        }
    }

    /** The bytes an array's elements occupy, as a slice of {@code data}, its access segment. */
    private static MemorySegment extent(NDArray a, MemorySegment data) {
        long lo = Strides.lowestByte(a.shape, a.strides);
        return data.asSlice(a.origin + lo, Strides.highestByte(a.shape, a.strides) - lo + a.dtype.itemSize());
    }

    /** Calls {@code action} with the byte offset of every element of a layout, in C order. */
    static void forEachOffset(long offset, long[] shape, long[] strides, long size, LongConsumer action) {
        if (size == 0) {
            return;
        }
        int nd = shape.length;
        if (nd == 0) {
            action.accept(offset);
            return;
        }
        long[] idx = new long[nd];
        long off = offset;
        long innerLen = shape[nd - 1];
        long innerStride = strides[nd - 1];
        for (long done = 0; done < size; done += innerLen) {
            long o = off;
            for (long k = 0; k < innerLen; k++, o += innerStride) {
                action.accept(o);
            }
            for (int d = nd - 2; d >= 0; d--) {
                idx[d]++;
                off += strides[d];
                if (idx[d] < shape[d]) {
                    break;
                }
                off -= strides[d] * shape[d];
                idx[d] = 0;
            }
        }
    }
}
