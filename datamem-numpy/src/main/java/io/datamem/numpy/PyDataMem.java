package io.datamem.numpy;

import io.datamem.DataMemHandler;
import io.datamem.MemoryTraits;
import io.datamem.numpy.internal.Export;
import io.datamem.numpy.internal.HandlerStruct;
import io.datamem.numpy.internal.ImportedAllocator;
import io.datamem.numpy.internal.Upcalls;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Objects;

/**
 * NEP 49 handlers across the C boundary: a datamem handler as NumPy's {@code PyDataMem_Handler}
 * ({@link #export}), and a native {@code PyDataMem_Handler} as a datamem handler
 * ({@link #importHandler}).
 *
 * <p>Exporting gives a struct laid out exactly as NumPy's ({@link #HANDLER_LAYOUT}) whose functions
 * call the Java handler. Wrap its address in a {@code PyCapsule} named {@value #CAPSULE_NAME} and
 * pass it to NumPy's {@code PyDataMem_SetHandler}: the arrays NumPy creates in that context then
 * take their data from the Java handler and free it through it.
 *
 * <pre>{@code
 * DataMemHandler stats = DataMem.createHandler("default_allocator+stats");
 * try (ExportedHandler exported = PyDataMem.export(stats)) {
 *     // C, with the GIL held:
 *     //   PyObject *capsule = PyCapsule_New(address, "mem_handler", NULL);
 *     //   PyObject *previous = PyDataMem_SetHandler(capsule);
 *     //   ... np.empty(1000) allocates through stats ...
 *     //   PyDataMem_SetHandler(previous);
 *     long address = exported.address();
 * }
 *
 * DataMemHandler shift = PyDataMem.importHandler(structFromC);  // calls the C functions
 * NDArray a = DataMem.callWith(shift, () -> NDArray.zeros(DType.FLOAT64, 1000));
 * }</pre>
 *
 * <p>This class links to no Python or NumPy library: installing the capsule is the caller's
 * business (C, or CPython's C API through FFM as the module's end-to-end test does).
 */
public final class PyDataMem {

    /** The name NumPy requires of the capsule that holds a {@code PyDataMem_Handler*}. */
    public static final String CAPSULE_NAME = "mem_handler";

    /** The version NEP 49 defines, and the only one written or read here. */
    public static final int VERSION = HandlerStruct.VERSION;

    /**
     * The size of the {@code char name[127]} field, the terminating NUL included: C reads at most
     * {@value #MAX_NATIVE_NAME_BYTES} bytes of name.
     */
    public static final int NAME_FIELD_BYTES = HandlerStruct.NAME_FIELD_BYTES;

    /**
     * The longest name C can read back: 126 UTF-8 bytes, one less than
     * {@link DataMemHandler#MAX_NAME_BYTES}. An exported name that is longer is cut at a character
     * boundary ({@link ExportedHandler#nativeName()}).
     */
    public static final int MAX_NATIVE_NAME_BYTES = HandlerStruct.MAX_NATIVE_NAME_BYTES;

    /**
     * NumPy's {@code PyDataMemAllocator}: {@code ctx}, {@code malloc}, {@code calloc},
     * {@code realloc}, {@code free}, five pointers.
     */
    public static final StructLayout ALLOCATOR_LAYOUT = HandlerStruct.ALLOCATOR_LAYOUT;

    /**
     * NumPy's {@code PyDataMem_Handler}: {@code char name[127]}, {@code uint8_t version}, then the
     * {@code PyDataMemAllocator} at offset 128; 168 bytes on 64-bit platforms.
     */
    public static final StructLayout HANDLER_LAYOUT = HandlerStruct.HANDLER_LAYOUT;

    private PyDataMem() {
    }

    /**
     * Exports a handler as a native {@code PyDataMem_Handler} whose functions call it.
     *
     * <p>The struct's {@code name} is the handler's name ({@link ExportedHandler#nativeName()} when
     * it had to be cut), its {@code version} is 1 whatever the handler's version (the struct's
     * layout is version 1), and its functions are FFM upcall stubs that keep a table of the live
     * blocks (NumPy's {@code realloc} does not pass the old size; the Java allocator needs it):
     *
     * <ul>
     * <li>{@code malloc}, {@code calloc}, {@code realloc} return what the handler returns, and
     *     {@code NULL} where the handler returns {@code NULL}, where {@code nelem * elsize}
     *     overflows, where a size is above {@link io.datamem.DataMemAllocator#MAX_BYTE_SIZE}, where
     *     the handler throws, and once the export is closed. {@code malloc(0)} returns what the
     *     handler returns for 0 bytes: with datamem's allocators, a unique pointer (as glibc's).
     *     {@code realloc(NULL, n)} allocates; {@code realloc} of a pointer that is not a live block
     *     returns {@code NULL} and leaves it alone.</li>
     * <li>{@code free} frees a live block with the size recorded for it; a different {@code size}
     *     argument is counted ({@link ExportStatistics#sizeMismatches()}: NumPy passes a wrong size
     *     for some arrays with a 0 in their shape), never passed on. {@code free(NULL)} does
     *     nothing; a pointer that is not a live block (foreign, or freed already) is counted and
     *     ignored.</li>
     * <li>No exception ever leaves a function (it would end the JVM): it is counted
     *     ({@link ExportStatistics#upcallErrors()}) and the function returns {@code NULL}.</li>
     * </ul>
     *
     * <p>The functions may be called from any thread, concurrently (NumPy calls them with the GIL
     * held, from whichever thread runs Python), so the handler must be thread-safe, as every
     * datamem allocator is.
     *
     * @param handler the handler to export
     * @return the export, open until closed
     * @throws NullPointerException if {@code handler} is null
     */
    public static ExportedHandler export(DataMemHandler handler) {
        Objects.requireNonNull(handler, "handler");
        return new ExportedHandler(Export.create(handler));
    }

    /**
     * Imports a native {@code PyDataMem_Handler} as a version-1 datamem handler, with host memory
     * aligned to 16 bytes ({@code alignof(max_align_t)} on 64-bit Linux, what {@code malloc}
     * gives and NumPy assumes). See {@link #importHandler(MemorySegment, MemoryTraits)}.
     *
     * @param struct the address of the struct
     * @return the handler
     * @throws NullPointerException     if {@code struct} is null
     * @throws IllegalArgumentException if the struct is not valid, as for
     *                                  {@link #importHandler(MemorySegment, MemoryTraits)}
     */
    public static DataMemHandler importHandler(MemorySegment struct) {
        return importHandler(struct, MemoryTraits.host(16));
    }

    /**
     * Imports a native {@code PyDataMem_Handler} as a version-1 datamem handler named as the
     * struct, whose allocator calls the struct's functions with its {@code ctx}.
     *
     * <p>The struct is read once, now: later changes to it are not seen. Its functions and
     * {@code ctx} must stay valid for as long as the handler or any block it allocated is in use.
     * The allocator checks its arguments as every datamem allocator does (negative sizes and sizes
     * above {@link io.datamem.DataMemAllocator#MAX_BYTE_SIZE} are {@link IllegalArgumentException}s,
     * overflowing {@code calloc} products {@code NULL}) before calling C; {@code realloc}'s old size
     * is not passed on (NEP 49's {@code realloc} has none); {@code free} passes the size. The C
     * functions are called on the thread that allocates, without any Python lock: a handler that
     * relies on NumPy's GIL to serialise its calls must be used from one thread at a time.
     *
     * @param struct the address of the struct (a zero-length segment is enough)
     * @param traits what the memory is: its kind and the alignment every block has
     * @return the handler
     * @throws NullPointerException     if {@code struct} or {@code traits} is null
     * @throws IllegalArgumentException if {@code struct} is {@code NULL} or not a native segment;
     *                                  if its {@code name} has no NUL within its 127 bytes, is empty
     *                                  or is not UTF-8; if its {@code version} is not 1; or if any
     *                                  of {@code malloc}, {@code calloc}, {@code realloc},
     *                                  {@code free} is {@code NULL}. The message names the struct's
     *                                  address and what is wrong
     */
    public static DataMemHandler importHandler(MemorySegment struct, MemoryTraits traits) {
        Objects.requireNonNull(struct, "struct");
        Objects.requireNonNull(traits, "traits");
        HandlerStruct.Contents contents = HandlerStruct.read(struct);
        return new DataMemHandler(contents.name(), 1, new ImportedAllocator(struct.address(), contents, traits));
    }

    /**
     * Calls into datamem's exported functions whose {@code ctx} names no export that is still
     * reachable: an export that was closed, emptied and garbage-collected since (C kept its struct
     * and called it), or a {@code ctx} datamem never wrote. Such calls return {@code NULL} or are
     * ignored.
     *
     * @return the count since the process started
     */
    public static long strayCalls() {
        return Upcalls.strayCalls();
    }
}
