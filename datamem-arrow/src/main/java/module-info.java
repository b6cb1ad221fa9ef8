/**
 * datamem's Apache Arrow interchange: {@link io.datamem.array.NDArray}s through the Arrow C Data
 * and C Device Data interfaces ({@code io.datamem.arrow}, the JDK only), and an Arrow Java
 * {@code AllocationManager.Factory} over a datamem handler ({@code io.datamem.arrow.memory}, which
 * alone needs Arrow Java's {@code arrow-memory-core}, an optional dependency).
 */
module io.datamem.arrow {
    requires transitive io.datamem.api;
    // Not transitive: a module that uses only io.datamem.arrow compiles without Arrow Java;
    // one that uses io.datamem.arrow.memory requires org.apache.arrow.memory.core itself.
    requires static org.apache.arrow.memory.core;

    exports io.datamem.arrow;
    exports io.datamem.arrow.memory;
}
