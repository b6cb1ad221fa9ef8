/**
 * The bridge between datamem and JNA: {@link io.datamem.jna.JnaPointer} hands an array's memory
 * to JNA-bound native code as a {@code com.sun.jna.Pointer}, held against closing;
 * {@link io.datamem.jna.JnaArrays} brings memory JNA allocated into datamem as arrays. The core
 * modules know nothing of JNA: only this one requires it.
 */
module io.datamem.jna {
    requires transitive io.datamem.api;
    // JNA is an automatic module (com.sun.jna, a stable name from its manifest); users of this
    // module require it themselves, as they call JNA.
    requires com.sun.jna;

    exports io.datamem.jna;
}
