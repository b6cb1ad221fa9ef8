package io.datamem.sycl;

import io.datamem.DataMemAllocator;
import io.datamem.testing.AllocatorConformanceTest;
import io.datamem.usm.UsmKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The conformance suite against every USM kind, at the device's natural alignment and at
 * alignments the runtime does not honour by itself (over-allocation). Device memory is written and
 * read through {@link SyclQueue#copy}.
 */
@Tag("sycl")
@ParameterizedClass(name = "sycl:{0}")
@ValueSource(strings = {"host", "shared", "device", "host/4096", "shared/256", "device/65536"})
class SyclUsmConformanceTest extends AllocatorConformanceTest {

    private final UsmKind kind;
    private final long alignment;

    SyclUsmConformanceTest(String variant) {
        String[] parts = variant.split("/");
        this.kind = UsmKind.ofDpctlName(parts[0]);
        this.alignment = parts.length > 1 ? Long.parseLong(parts[1]) : 0;
    }

    @Override
    protected DataMemAllocator allocator() {
        SyclQueue queue = SyclTests.queue(kind);
        SyclUsmAllocator.Builder b = SyclUsmAllocator.builder(kind).queue(queue).name(handlerName());
        if (alignment > 0) {
            b.byteAlignment(alignment);
        }
        return b.build();
    }

    @Override
    protected String handlerName() {
        return "sycl:" + kind.dpctlName() + (alignment > 0 ? "/" + alignment : "");
    }

    @Override
    protected int operationsPerThread() {
        return kind == UsmKind.DEVICE || alignment >= 65536 ? 500 : 2000;
    }

    @Override
    protected void write(MemorySegment ptr, long offset, byte[] bytes) {
        if (kind.hostAccessible()) {
            super.write(ptr, offset, bytes);
            return;
        }
        queue().copy(MemorySegment.ofAddress(ptr.address() + offset), MemorySegment.ofArray(bytes), bytes.length);
    }

    @Override
    protected byte[] read(MemorySegment ptr, long offset, int length) {
        if (kind.hostAccessible()) {
            return super.read(ptr, offset, length);
        }
        byte[] out = new byte[length];
        queue().copy(MemorySegment.ofArray(out), MemorySegment.ofAddress(ptr.address() + offset), length);
        return out;
    }

    private SyclQueue queue() {
        return ((SyclUsmAllocator) subject()).queue();
    }

    @Override
    protected void verifyAfterTest(DataMemAllocator allocator) {
        assertEquals(0, ((SyclUsmAllocator) allocator).trackedBlocks(),
                "every over-aligned or zero-size block was freed and forgotten");
    }
}
