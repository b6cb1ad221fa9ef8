package io.datamem;

import io.datamem.DataMem;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.buffer.DeviceInfo;
import io.datamem.buffer.StandardDeviceInfo;
import io.datamem.testing.FakeDeviceAllocator;
import io.datamem.usm.UsmHook;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The typed lookup of export-protocol hooks on {@link MemoryTraits}. */
class MemoryTraitsHookTest {

    /** An interchange that serves no protocol itself, and the buffer protocol through another object. */
    private static final class Delegating implements DeviceInterchange {
        final BufferDeviceHook buffer = new BufferDeviceHook() {
            @Override
            public String bufferDeviceId() {
                return "test.delegating";
            }

            @Override
            public DeviceInfo deviceInfo(MemorySegment ptr, MemoryTraits traits) {
                return new StandardDeviceInfo(traits.device(), traits.kind(), 0, 0, 0);
            }
        };

        @Override
        public void synchronize(MemorySegment ptr, OptionalLong consumerStream) {
        }

        @Override
        public void copyToHost(MemorySegment ptr, long byteOffset, MemorySegment target, long byteSize) {
        }

        @Override
        public <T> Optional<T> hook(Class<T> type) {
            return type == BufferDeviceHook.class ? Optional.of(type.cast(buffer)) : DeviceInterchange.super.hook(type);
        }
    }

    @Test
    void traitsWithoutAnInterchangeServeNoHook() {
        MemoryTraits host = MemoryTraits.host(64);
        assertTrue(host.hook(BufferDeviceHook.class).isEmpty());
        assertTrue(host.hook(UsmHook.class).isEmpty());
        assertTrue(host.hook(DeviceInterchange.class).isEmpty());
        assertThrows(NullPointerException.class, () -> host.hook(null));
    }

    @Test
    void anInterchangeServesTheHooksItImplements() {
        FakeDeviceAllocator fake = FakeDeviceAllocator.cudaDevice(DataMem.builtinDefault().allocator());
        MemoryTraits traits = fake.traits();
        assertSame(fake, traits.hook(BufferDeviceHook.class).orElseThrow());
        assertSame(fake, traits.hook(UsmHook.class).orElseThrow());
        assertSame(fake, traits.hook(DeviceInterchange.class).orElseThrow());
        assertTrue(traits.hook(Runnable.class).isEmpty());
    }

    @Test
    void anInterchangeMayServeAHookThroughAnotherObject() {
        Delegating d = new Delegating();
        MemoryTraits traits = new MemoryTraits(MemoryKind.DEVICE, new Device(DeviceType.CUDA, 0), false, 256, 4096, d);
        assertSame(d.buffer, traits.hook(BufferDeviceHook.class).orElseThrow());
        assertEquals("test.delegating", traits.hook(BufferDeviceHook.class).orElseThrow().bufferDeviceId());
        assertTrue(traits.hook(UsmHook.class).isEmpty());
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> d.copyWithinDevice(MemorySegment.NULL, 0, MemorySegment.NULL, 0, 1));
        assertTrue(e.getMessage().contains("does not copy within device memory"), e.getMessage());
    }
}
