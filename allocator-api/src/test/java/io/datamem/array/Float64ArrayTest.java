package io.datamem.array;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Float64 arrays are of one class of their own, whatever made them (so that a call site sees one
 * class for owners and views alike), and its direct accessors behave exactly as the dtype dispatch
 * every other dtype goes through: same values, same exceptions, same messages.
 */
class Float64ArrayTest {

    private static final DataMemHandler H = DataMem.handler("default_allocator");

    @Test
    void everyFloat64ArrayIsOfTheOneClassAndNoOtherArrayIs() {
        DataMem.runWith(H, () -> {
            try (NDArray a = NDArray.zeros(DType.FLOAT64, 4, 6); NDArray i = NDArray.zeros(DType.INT32, 4, 6);
                 NDArray copy = a.copy(); Arena arena = Arena.ofConfined()) {
                NDArray wrapped = NDArray.wrap(arena.allocate(48, 8), DType.FLOAT64, 6);
                for (NDArray f : new NDArray[] {a, a.transpose(), a.select(0, 1), a.reshape(24), a.asReadOnly(),
                        a.slice(Slice.all(), Slice.range(0, 6, 2)), wrapped, copy}) {
                    assertSame(Float64Array.class, f.getClass(), f.toString());
                }
                for (NDArray o : new NDArray[] {i, i.transpose(), i.select(0, 1), i.asReadOnly()}) {
                    assertSame(NDArray.class, o.getClass(), o.toString());
                }
                assertSame(a, a.transpose().base());
                assertEquals(null, a.base());
            }
        });
    }

    @Test
    void itsAccessorsAgreeWithTheBulkCopiesAndTheGeneralPath() {
        DataMem.runWith(H, () -> {
            try (NDArray a = NDArray.empty(DType.FLOAT64, 3, 4)) {
                for (long r = 0; r < 3; r++) {
                    for (long c = 0; c < 4; c++) {
                        a.setDouble(r * 4 + c + 0.25, r, c);
                    }
                }
                double[] all = a.toDoubleArray();
                for (int k = 0; k < 12; k++) {
                    assertEquals(k + 0.25, all[k]);
                    assertEquals(k + 0.25, ElementCodec.readDouble(DType.FLOAT64, a.segment(), 8L * k));
                }
                NDArray t = a.transpose();
                assertEquals(a.getDouble(2, 1), t.getDouble(1, 2));
                assertEquals(a.getDouble(new long[] {2, 3}), t.getDouble(3, 2));
                NDArray column = a.select(1, 3);
                column.setDouble(-1.5, 2);
                assertEquals(-1.5, a.getDouble(2, 3));
                a.copyFrom(new double[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
                assertEquals(12.0, t.getDouble(new long[] {3, 2}));
                assertArrayEquals(new long[] {1, 5, 9}, a.select(1, 0).toLongArray());
            }
        });
    }

    @Test
    void itFailsAsEveryOtherDtypeDoes() throws Exception {
        for (Consumer<NDArray> misuse : new Consumer[] {
                (Consumer<NDArray>) x -> x.getDouble(1), (Consumer<NDArray>) x -> x.setDouble(1, 1),
                (Consumer<NDArray>) x -> x.getDouble(new long[] {1}), (Consumer<NDArray>) x -> x.setDouble(1, 0, 0),
                (Consumer<NDArray>) x -> x.getDouble(9)}) {
            assertEquals(failure(DType.FLOAT32, misuse, "closed"), failure(DType.FLOAT64, misuse, "closed"));
            assertEquals(failure(DType.FLOAT32, misuse, "thread"), failure(DType.FLOAT64, misuse, "thread"));
            assertEquals(failure(DType.FLOAT32, misuse, "stale"), failure(DType.FLOAT64, misuse, "stale"));
        }
        NDArray ro = NDArray.wrap(MemorySegment.ofArray(new double[4]).asReadOnly(), DType.FLOAT64, 4);
        assertThrows(UnsupportedOperationException.class, () -> ro.setDouble(1, 0));
        assertThrows(UnsupportedOperationException.class, () -> ro.setDouble(1, new long[] {0}));
        assertEquals(0.0, ro.getDouble(3));
    }

    /** What {@code misuse} throws on a 1-D array of {@code dtype} in {@code state}, the dtype's name taken out. */
    private static String failure(DType dtype, Consumer<NDArray> misuse, String state) throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        DataMem.runWith(H, () -> {
            NDArray owner = NDArray.zeros(dtype, 4);
            NDArray a = owner.reshape(4);
            switch (state) {
                case "closed" -> {
                    owner.close();
                    thrown.set(catchIt(() -> misuse.accept(a)));
                }
                case "thread" -> {
                    Thread t = new Thread(() -> thrown.set(catchIt(() -> misuse.accept(a))));
                    t.start();
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    owner.close();
                }
                case "stale" -> {
                    owner.resize(8);
                    thrown.set(catchIt(() -> misuse.accept(a)));
                    owner.close();
                }
                default -> throw new AssertionError(state);
            }
        });
        Throwable e = thrown.get();
        assertNotNull(e, dtype + " " + state);
        assertNotSame(null, e.getMessage());
        return e.getClass().getName() + ": " + e.getMessage().replace(dtype.toString(), "DTYPE");
    }

    private static Throwable catchIt(Runnable r) {
        try {
            r.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }
}
