package io.datamem.impl.internal.adaptor;

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
    @Name("io.datamem.PoolMemory")
    @Label("datamem Pool Memory")
    @Category({"datamem", "Memory"})
    @Description("What a pool under a +jfr adaptor holds from its upstream, how much of it no block uses, and the"
            + " longest free stretch in one run (far below the free bytes: fragmented), from its memory snapshot.")
    @jdk.jfr.Period("1 s")
    static final class PoolMemory extends Event {
        @Label("Handler")
        String handler;
        @Label("Held")
        @Description("Bytes the pool holds from its upstream: its runs and large blocks")
        @DataAmount
        long heldBytes;
        @Label("Free")
        @Description("Held bytes no block uses: free blocks and uncarved slab space")
        @DataAmount
        long freeBytes;
        @Label("Largest Free Run")
        @DataAmount
        long largestFreeRunBytes;
    }

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
