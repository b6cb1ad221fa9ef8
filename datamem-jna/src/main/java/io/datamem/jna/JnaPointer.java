package io.datamem.jna;

import com.sun.jna.Pointer;
import io.datamem.array.NDArray;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A datamem array's memory as a JNA {@link Pointer}, zero-copy: the pointer holds the address of
 * the array's element [0, ..., 0] (for a C-contiguous array, its first byte), and the array is held
 * against closing and resizing until this is closed, through the lifecycle check every export of
 * an array goes through ({@link NDArray#hold()}). While it is held, {@code close()} and
 * {@code resize} of the array (and of its owner, for a view) throw {@link IllegalStateException}.
 *
 * <p>Close it exactly when the native code is done with the memory; closing it again does
 * nothing, and never releases another holder's hold. The pointer itself is a plain address: JNA
 * does not check it, so use it only while this is open.
 */
@SuppressWarnings("exports") // com.sun.jna.Pointer in the API: users of this class call JNA
public final class JnaPointer implements AutoCloseable {

    private final NDArray array;
    private final NDArray.Hold pin;
    private final Pointer pointer;

    private JnaPointer(NDArray array, NDArray.Hold pin, Pointer pointer) {
        this.array = array;
        this.pin = pin;
        this.pointer = pointer;
    }

    /**
     * Holds an array and gives its memory as a JNA pointer.
     *
     * @param array an array of host-accessible memory
     * @return the hold, with the pointer; close it when the native code is done
     * @throws NullPointerException          if {@code array} is null
     * @throws IllegalStateException         if the array is closed or being closed, or is a view of an
     *                                       owner resized since the view was made
     * @throws IllegalArgumentException      if the array's memory is not host-accessible (device
     *                                       memory: JNA reads and writes host memory; give it to
     *                                       JCuda through datamem-jcuda instead)
     * @throws UnsupportedOperationException if the array wraps a Java heap segment, which has no
     *                                       native address
     */
    public static JnaPointer of(NDArray array) {
        Objects.requireNonNull(array, "array");
        NDArray.Hold pin = array.hold();
        try {
            if (!array.traits().hostAccessible()) {
                throw new IllegalArgumentException(array + ": its memory is " + array.traits().kind()
                        + " memory the host cannot access (expected: host-accessible memory; JNA's Pointer reads"
                        + " and writes host memory, and datamem-jcuda gives device memory to JCuda)");
            }
            return new JnaPointer(array, pin, new Pointer(array.address()));
        } catch (RuntimeException | Error e) {
            pin.close();
            throw e;
        }
    }

    /**
     * A native segment's memory as a JNA pointer (a block a handler allocated, a segment of a
     * handler's arena), zero-copy. Nothing holds the memory: a segment has no lifecycle check that
     * a pointer could take part in, so its owner keeps it allocated while the pointer is used.
     * Hand arrays over with {@link #of(NDArray)}, which holds them.
     *
     * @param segment a native segment whose scope is alive
     * @return a pointer to its first byte
     * @throws NullPointerException     if {@code segment} is null
     * @throws IllegalArgumentException if the segment is a Java heap segment
     * @throws IllegalStateException    if the segment's scope is no longer alive
     */
    public static Pointer pointerTo(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("segment: a Java heap segment of " + segment.byteSize()
                    + " bytes (expected: a native segment; a heap segment has no address JNA could use)");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("segment: its scope is no longer alive (the memory of " + segment
                    + " was freed)");
        }
        return new Pointer(segment.address());
    }

    /**
     * The pointer to the array's element [0, ..., 0].
     *
     * @return the pointer
     * @throws IllegalStateException if this hold was closed (the array may be freed since)
     */
    public Pointer pointer() {
        if (pin.isReleased()) {
            throw new IllegalStateException(this + " is closed: its pointer may no longer be used");
        }
        return pointer;
    }

    /**
     * The array held.
     *
     * @return the array
     */
    public NDArray array() {
        return array;
    }

    /**
     * Whether {@link #close()} has run.
     *
     * @return true once the hold is released
     */
    public boolean isReleased() {
        return pin.isReleased();
    }

    /** Releases the hold on the array, the first time it is called; later calls do nothing. */
    @Override
    public void close() {
        pin.close();   // releases once; later closes do nothing
    }

    @Override
    public String toString() {
        return "JnaPointer[" + array + ", 0x" + Long.toHexString(Pointer.nativeValue(pointer))
                + (pin.isReleased() ? ", released" : ", held") + "]";
    }
}
