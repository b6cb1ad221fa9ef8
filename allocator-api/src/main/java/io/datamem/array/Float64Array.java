package io.datamem.array;

import io.datamem.DataMemHandler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The class of every float64 array (owner, view or wrapped): {@link NDArray} with its double
 * accessors reading and writing the element directly, without the dtype dispatch of
 * {@link ElementCodec}. Nothing else differs; users only ever see {@link NDArray}.
 *
 * <p>Why a class: the dtype is then in the array's class, which the JIT reads from the object
 * header (memory that never changes) and profiles at each of the user's call sites. A loop over
 * float64 arrays compiles to one bounds-checked access per element however the rest of the process
 * used other dtypes. With the dtype in a field and one shared dispatch, an int32 array read once
 * anywhere made the dispatch's int32 branch "rare but taken"; the JIT compiled that branch as a call,
 * and a call in a loop makes every field load of the loop reload each time: a 256 x 256 matrix
 * multiply after such use took 8 times the same loops over {@code double[][]}
 * (docs/decisions.md, "Float64 arrays are a class of their own").
 */
final class Float64Array extends NDArray {

    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    /** A wrapped segment, or an array of a workspace scope. */
    Float64Array(ArrayMemory memory, DType dtype, boolean readOnly, long origin, long[] shape, long[] strides) {
        super(memory, dtype, readOnly, origin, shape, strides);
    }

    /** A view of {@code base}. */
    Float64Array(NDArray base, ArrayMemory memory, boolean readOnly, long origin, long[] shape, long[] strides) {
        super(base, memory, readOnly, origin, shape, strides);
    }

    /** An owner of a block a handler allocated. */
    Float64Array(DataMemHandler handler, long address, long allocatedByteSize, boolean hostAccessible, DType dtype,
                 boolean readOnly, long byteOffset, long[] shape, long[] strides, ThreadHome home) {
        super(handler, address, allocatedByteSize, hostAccessible, dtype, readOnly, byteOffset, shape, strides, home);
    }

    // Each accessor: the index check, then one read or write of the segment access() picks, whose
    // JDK check refuses what must be refused; its only other path throws (see ArrayElements).

    private double read(long off) {
        MemorySegment d = access();
        try {
            return d.get(F64, off);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    private void write(long off, double value) {
        if (readOnly) {
            throw readOnly();
        }
        MemorySegment d = access();
        try {
            d.set(F64, off, value);
        } catch (IllegalStateException | WrongThreadException e) {
            throw failed(e);
        }
    }

    @Override
    public double getDouble(long... index) {
        return read(atN(index));
    }

    @Override
    public double getDouble(long i) {
        return read(at1(i));
    }

    @Override
    public double getDouble(long i, long j) {
        return read(at2(i, j));
    }

    @Override
    public void setDouble(double value, long... index) {
        write(atN(index), value);
    }

    @Override
    public void setDouble(double value, long i) {
        write(at1(i), value);
    }

    @Override
    public void setDouble(double value, long i, long j) {
        write(at2(i, j), value);
    }
}
