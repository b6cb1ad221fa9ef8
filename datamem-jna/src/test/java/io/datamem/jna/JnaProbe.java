package io.datamem.jna;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.datamem.testing.NativeToolchain;

import java.nio.file.Path;
import java.util.List;

/** The JNA binding of {@code native/jna_probe.c}, compiled at test time (gcc). */
@SuppressWarnings("exports") // JNA's types: the tests call JNA
public interface JnaProbe extends Library {

    /**
     * Compiles the probe into {@code dir} and binds it.
     *
     * @param dir a directory for the source and the library
     * @return the binding
     */
    static JnaProbe load(Path dir) {
        Path library = NativeToolchain.compileSharedLibrary("native/jna_probe.c", dir, List.of());
        return Native.load(library.toString(), JnaProbe.class);
    }

    /** Adds 1 to each of {@code n} doubles in place; returns their sum before. */
    double jna_probe_add_one(Pointer values, long n);

    /** The address the C function received. */
    long jna_probe_address_of(Pointer p);

    /** A malloc'd buffer of {@code n} int64 values {@code i * i}. */
    Pointer jna_probe_buffer_new(long n);

    /** Frees a buffer of {@code jna_probe_buffer_new} and counts it. */
    void jna_probe_buffer_free(Pointer p);

    /** How many buffers were freed. */
    int jna_probe_buffers_freed();
}
