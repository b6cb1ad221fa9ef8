package io.datamem.numpy.internal;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The layout of NumPy's {@code PyDataMem_Handler} and {@code PyDataMemAllocator}
 * ({@code numpy/core/include/numpy/ndarraytypes.h}, NumPy 1.22 and later), and reading and writing
 * them.
 *
 * <pre>{@code
 * typedef struct {
 *     void *ctx;
 *     void* (*malloc) (void *ctx, size_t size);
 *     void* (*calloc) (void *ctx, size_t nelem, size_t elsize);
 *     void* (*realloc) (void *ctx, void *ptr, size_t new_size);
 *     void (*free) (void *ctx, void *ptr, size_t size);
 * } PyDataMemAllocator;
 *
 * typedef struct {
 *     char name[127];  // multiple of 64 to keep the struct aligned
 *     uint8_t version; // currently 1
 *     PyDataMemAllocator allocator;
 * } PyDataMem_Handler;
 * }</pre>
 */
public final class HandlerStruct {

    /** The length of the {@code name} field, its terminating NUL included. */
    public static final int NAME_FIELD_BYTES = 127;
    /** The longest name C can read from the field: one byte is the terminating NUL. */
    public static final int MAX_NATIVE_NAME_BYTES = NAME_FIELD_BYTES - 1;
    /** The only version NEP 49 defines. */
    public static final int VERSION = 1;

    /** {@code PyDataMemAllocator}. */
    public static final StructLayout ALLOCATOR_LAYOUT = MemoryLayout.structLayout(
            ADDRESS.withName("ctx"),
            ADDRESS.withName("malloc"),
            ADDRESS.withName("calloc"),
            ADDRESS.withName("realloc"),
            ADDRESS.withName("free")).withName("PyDataMemAllocator");

    /** {@code PyDataMem_Handler}: 168 bytes on 64-bit platforms, the allocator at offset 128. */
    public static final StructLayout HANDLER_LAYOUT = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(NAME_FIELD_BYTES, JAVA_BYTE).withName("name"),
            JAVA_BYTE.withName("version"),
            ALLOCATOR_LAYOUT.withName("allocator")).withName("PyDataMem_Handler");

    /** The fields of the allocator that are function pointers, in struct order. */
    public static final List<String> FUNCTIONS = List.of("malloc", "calloc", "realloc", "free");

    private static final long VERSION_OFFSET = HANDLER_LAYOUT.byteOffset(PathElement.groupElement("version"));
    private static final long CTX_OFFSET = allocatorOffset("ctx");

    private HandlerStruct() {
    }

    /**
     * The offset of a field of the allocator from the start of the handler struct.
     *
     * @param field {@code ctx}, {@code malloc}, {@code calloc}, {@code realloc} or {@code free}
     * @return the offset in bytes
     * @throws IllegalArgumentException if there is no such field
     */
    public static long allocatorOffset(String field) {
        return HANDLER_LAYOUT.byteOffset(PathElement.groupElement("allocator"), PathElement.groupElement(field));
    }

    /**
     * The bytes of a handler name as the {@code name} field holds them: its UTF-8 encoding, cut to
     * at most {@value #MAX_NATIVE_NAME_BYTES} bytes at a character boundary, so that a terminating
     * NUL fits in the field. A datamem name has at most 127 UTF-8 bytes, one more than C can read
     * back: only such a name is cut.
     *
     * @param name a handler name
     * @return its native bytes, without the NUL
     */
    public static byte[] nativeNameBytes(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= MAX_NATIVE_NAME_BYTES) {
            return utf8;
        }
        int end = MAX_NATIVE_NAME_BYTES;
        while (end > 0 && (utf8[end] & 0xC0) == 0x80) { // never cut inside a character
            end--;
        }
        return Arrays.copyOf(utf8, end);
    }

    /**
     * Fills a zeroed struct.
     *
     * @param struct    {@link #HANDLER_LAYOUT}-sized, zeroed memory
     * @param nameBytes the name, from {@link #nativeNameBytes}
     * @param ctx       the {@code ctx} pointer
     * @param functions malloc, calloc, realloc and free, in that order
     */
    public static void write(MemorySegment struct, byte[] nameBytes, MemorySegment ctx, MemorySegment... functions) {
        MemorySegment.copy(nameBytes, 0, struct, JAVA_BYTE, 0, nameBytes.length);
        struct.set(JAVA_BYTE, nameBytes.length, (byte) 0);
        struct.set(JAVA_BYTE, VERSION_OFFSET, (byte) VERSION);
        struct.set(ADDRESS, CTX_OFFSET, ctx);
        for (int i = 0; i < FUNCTIONS.size(); i++) {
            struct.set(ADDRESS, allocatorOffset(FUNCTIONS.get(i)), functions[i]);
        }
    }

    /**
     * What a native struct holds, read once and checked.
     *
     * @param name      the name, decoded from UTF-8
     * @param version   the version byte (always {@value #VERSION} once checked)
     * @param ctx       the {@code ctx} pointer (may be {@code NULL})
     * @param malloc    the malloc function
     * @param calloc    the calloc function
     * @param realloc   the realloc function
     * @param free      the free function
     */
    public record Contents(String name, int version, MemorySegment ctx, MemorySegment malloc, MemorySegment calloc,
            MemorySegment realloc, MemorySegment free) {
    }

    /**
     * Reads and checks a native {@code PyDataMem_Handler}.
     *
     * @param address the struct's address
     * @return its contents
     * @throws IllegalArgumentException if the address is {@code NULL} or not native; the name has no NUL within its
     *                                  127 bytes, is empty or is not UTF-8; the version is not 1; or a
     *                                  function pointer is {@code NULL}
     */
    public static Contents read(MemorySegment address) {
        if (!address.isNative()) {
            throw new IllegalArgumentException("PyDataMem_Handler: " + address
                    + " (expected: a native segment, the struct's address)");
        }
        if (address.address() == 0) {
            throw new IllegalArgumentException("PyDataMem_Handler: NULL (expected: the address of a struct)");
        }
        MemorySegment struct = MemorySegment.ofAddress(address.address()).reinterpret(HANDLER_LAYOUT.byteSize());
        String where = "PyDataMem_Handler at 0x" + Long.toHexString(struct.address());
        byte[] field = new byte[NAME_FIELD_BYTES];
        MemorySegment.copy(struct, JAVA_BYTE, 0, field, 0, NAME_FIELD_BYTES);
        int nul = 0;
        while (nul < NAME_FIELD_BYTES && field[nul] != 0) {
            nul++;
        }
        if (nul == NAME_FIELD_BYTES) {
            throw new IllegalArgumentException(where + ": name is not NUL-terminated within its "
                    + NAME_FIELD_BYTES + " bytes (expected: a C string of at most " + MAX_NATIVE_NAME_BYTES
                    + " bytes)");
        }
        if (nul == 0) {
            throw new IllegalArgumentException(where + ": name is empty (expected: a handler name)");
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(field, 0, nul)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(where + ": name is not valid UTF-8 (expected: a UTF-8 C string)", e);
        }
        int version = Byte.toUnsignedInt(struct.get(JAVA_BYTE, VERSION_OFFSET));
        if (version != VERSION) {
            throw new IllegalArgumentException(where + " (" + name + "): version " + version + " (expected: "
                    + VERSION + ", the only PyDataMemAllocator layout NEP 49 defines)");
        }
        AddressLayout pointer = ValueLayout.ADDRESS;
        MemorySegment ctx = struct.get(pointer, CTX_OFFSET);
        MemorySegment[] fns = new MemorySegment[FUNCTIONS.size()];
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < fns.length; i++) {
            fns[i] = struct.get(pointer, allocatorOffset(FUNCTIONS.get(i)));
            if (fns[i].address() == 0) {
                missing.add(FUNCTIONS.get(i));
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException(where + " (" + name + "): allocator." + String.join(", allocator.",
                    missing) + (missing.size() == 1 ? " is" : " are") + " NULL (expected: every function of "
                    + "PyDataMemAllocator, as PyDataMem_SetHandler requires)");
        }
        return new Contents(name, version, ctx, fns[0], fns[1], fns[2], fns[3]);
    }
}
