package io.datamem.impl.adaptor;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Name;

/** The JFR event types {@link JfrEventAdaptor} emits. Not an API: see docs/observability.md. */
final class JfrEvents {

    private JfrEvents() {
    }

    /** {@code io.datamem.Allocation}: a malloc, calloc or realloc, with its duration. */
    @Name("io.datamem.Allocation")
    @Label("datamem Allocation")
    @Category({"datamem", "Memory"})
    @Description("A native allocation through a datamem handler: malloc, calloc or realloc. Address 0: it failed.")
    static final class Allocation extends Event {
        @Label("Handler")
        String handler;

        @Label("Operation")
        String operation;

        @Label("Address")
        @MemoryAddress
        long address;

        @Label("Size")
        @DataAmount
        long byteSize;

        @Label("Previous Address")
        @Description("realloc: the block resized; else 0")
        @MemoryAddress
        long previousAddress;

        @Label("Previous Size")
        @Description("realloc: the block's size before; else 0")
        @DataAmount
        long previousByteSize;
    }

    /** {@code io.datamem.Free}: a free, with its duration. */
    @Name("io.datamem.Free")
    @Label("datamem Free")
    @Category({"datamem", "Memory"})
    @Description("A native block freed through a datamem handler.")
    static final class Free extends Event {
        @Label("Handler")
        String handler;

        @Label("Address")
        @MemoryAddress
        long address;

        @Label("Size")
        @DataAmount
        long byteSize;
    }
}
