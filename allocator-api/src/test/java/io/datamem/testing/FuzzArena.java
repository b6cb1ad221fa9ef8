package io.datamem.testing;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Native memory a fuzz target builds a C struct in from the fuzzer's bytes. The bytes are copied
 * to the start of an arena of {@link #SPAN} bytes followed by {@link #TAIL} zero bytes; the
 * harness then rewrites every pointer field with {@link #pointer} (NULL stays NULL, any other
 * value becomes an address inside the span) and every function pointer with {@link #function}
 * (NULL or a no-op the harness made). So every pointer a hostile struct holds names memory the
 * target owns, C strings end inside the arena (its last bytes are zero) and arrays of up to
 * {@code TAIL / 8} longs behind any such pointer are readable: a crash or a read outside is a
 * real out-of-bounds read by the code under test, not an artefact of the harness.
 */
public final class FuzzArena implements AutoCloseable {

    /** Bytes the fuzzer's input fills and pointers land in. */
    public static final int SPAN = 4096;

    /** Zero bytes after the span: C strings end in them, arrays of 128 longs fit. */
    public static final int TAIL = 1024;

    private static final AtomicLong RELEASES = new AtomicLong();
    private static final MemorySegment NO_OP_RELEASE;

    static {
        try {
            NO_OP_RELEASE = Linker.nativeLinker().upcallStub(
                    MethodHandles.lookup().findStatic(FuzzArena.class, "released",
                            MethodType.methodType(void.class, MemorySegment.class)),
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment memory;

    /**
     * An arena holding {@code input} at its start (cut at {@link #SPAN} bytes), zero elsewhere.
     *
     * @param input the fuzzer's bytes
     */
    public FuzzArena(byte[] input) {
        memory = arena.allocate(SPAN + TAIL, 64);
        MemorySegment.copy(input, 0, memory, ValueLayout.JAVA_BYTE, 0, Math.min(input.length, SPAN));
    }

    /**
     * The whole arena.
     *
     * @return its segment
     */
    public MemorySegment memory() {
        return memory;
    }

    /**
     * The address of the struct at {@code offset}, as a zero-length segment, as C hands one over.
     *
     * @param offset where in the arena
     * @return the address
     */
    public MemorySegment at(long offset) {
        return MemorySegment.ofAddress(memory.address() + offset);
    }

    /**
     * Rewrites the 8-byte pointer field at {@code offset}: 0 stays NULL, any other value
     * {@code v} becomes the address of arena byte {@code v mod SPAN}.
     *
     * @param offset the field's offset in the arena
     * @return the arena offset the pointer now names, or -1 for NULL
     */
    public long pointer(long offset) {
        long v = memory.get(JAVA_LONG, offset);
        if (v == 0) {
            return -1;
        }
        long target = Long.remainderUnsigned(v, SPAN);
        memory.set(JAVA_LONG, offset, memory.address() + target);
        return target;
    }

    /**
     * Rewrites the function pointer at {@code offset}: 0 stays NULL, anything else becomes a
     * no-op {@code void (*)(void*)} that counts its calls ({@link #releases()}).
     *
     * @param offset the field's offset in the arena
     */
    public void function(long offset) {
        if (memory.get(JAVA_LONG, offset) != 0) {
            memory.set(JAVA_LONG, offset, NO_OP_RELEASE.address());
        }
    }

    /**
     * The calls of the no-op functions since the process started.
     *
     * @return the count
     */
    public static long releases() {
        return RELEASES.get();
    }

    private static void released(MemorySegment ignored) {
        RELEASES.incrementAndGet();
    }

    @Override
    public void close() {
        arena.close();
    }
}
