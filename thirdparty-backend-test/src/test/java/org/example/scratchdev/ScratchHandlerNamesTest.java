package org.example.scratchdev;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.Device;
import io.datamem.DeviceType;
import io.datamem.MemoryKind;
import io.datamem.MemoryTraits;
import io.datamem.buffer.BufferDeviceHook;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderTerm;
import org.example.scratchdev.provider.ScratchProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code scratchdev} provider as datamem's registry sees it: found by {@link java.util.ServiceLoader},
 * resolving {@code scratchdev} and {@code scratchdev:N} (alone and under datamem's adaptors),
 * refusing malformed terms before building anything, and handing its hook to DLPack imports.
 */
class ScratchHandlerNamesTest {

    @Test
    void theProviderIsInstalled() {
        DataMemProvider p = DataMemProvider.installed().stream().filter(q -> q.name().equals("scratchdev"))
                .findFirst().orElseThrow(() -> new AssertionError("scratchdev is not among "
                        + DataMemProvider.installed()));
        assertInstanceOf(ScratchProvider.class, p);
        assertEquals(DataMemProvider.Role.LEAF, p.role());
        assertTrue(p.availability().available(), p.availability().toString());
        assertTrue(DataMem.describeProviders().contains("scratchdev:N"), DataMem.describeProviders());
    }

    @Test
    void scratchdevIsDevice0() {
        DataMemHandler h = DataMem.handler("scratchdev");
        assertEquals("scratchdev", h.name());
        assertSame(h, DataMem.handler("scratchdev"), "cached by name");
        ScratchAllocator a = assertInstanceOf(ScratchAllocator.class, h.allocator());
        assertEquals("scratchdev", a.handlerName());
        MemoryTraits t = h.traits();
        assertEquals(MemoryKind.DEVICE, t.kind());
        assertFalse(t.hostAccessible());
        assertEquals(new Device(DeviceType.EXT_DEV, 0), t.device());
        assertEquals(ScratchDevice.BYTE_ALIGNMENT, t.byteAlignment());
        assertSame(ScratchDevice.of(0).interchange(), t.interchange());
        assertSame(t.interchange(), t.hook(BufferDeviceHook.class).orElseThrow(), "the hook serves the buffer protocol");
    }

    @Test
    void anOrdinalPicksTheDeviceAndDatamemAdaptorsStackOnIt() {
        DataMemHandler one = DataMem.handler("scratchdev:1");
        assertEquals(new Device(DeviceType.EXT_DEV, 1), one.traits().device());
        assertSame(ScratchDevice.of(1).interchange(), one.traits().interchange());

        DataMemHandler stats = DataMem.handler("scratchdev:1+stats");
        assertEquals("scratchdev:1+stats", stats.name());
        assertFalse(stats.allocator() instanceof ScratchAllocator, "wrapped by datamem's statistics adaptor");
        assertEquals(one.traits(), stats.traits(), "the adaptor forwards the traits, hook included");
        MemorySegment p = stats.allocator().malloc(1000);
        assertNotEquals(0, p.address());
        assertEquals(one.traits(), stats.allocator().traitsOf(p));
        stats.allocator().free(p, 1000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"scratchdev:", "scratchdev:x", "scratchdev:-1", "scratchdev:1:2", "scratchdev=1",
            "scratchdev(aligned64)", "scratchdev:01234"})
    void malformedTermsAreRefusedBeforeAnythingIsBuilt(String name) {
        long blocks = ScratchDevice.of(0).liveBlocks();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataMem.createHandler(name));
        assertTrue(e.getMessage().contains("'" + name + "'") && e.getMessage().contains("scratchdev:N"),
                e.getMessage());
        assertEquals(blocks, ScratchDevice.of(0).liveBlocks());
    }

    @Test
    void anOrdinalWithoutADeviceIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DataMem.createHandler("scratchdev:4+stats"));
        assertTrue(e.getMessage().contains("no scratch device 4") && e.getMessage().contains("0 to 3"),
                e.getMessage());
        assertEquals(3, ScratchProvider.ordinal(new ProviderTerm("scratchdev:3"), "x"));
        assertEquals(0, ScratchProvider.ordinal(new ProviderTerm("scratchdev"), "x"));
        assertThrows(IllegalArgumentException.class, () -> ScratchDevice.of(-1));
        assertThrows(IllegalArgumentException.class, () -> ScratchDevice.of(ScratchDevice.COUNT));
    }

    @Test
    void theHookGoesToImportsOnTheDevicesItManagesOnly() {
        ScratchProvider p = new ScratchProvider();
        assertEquals(Optional.of(ScratchDevice.of(1).interchange()),
                p.interchangeFor(new Device(DeviceType.EXT_DEV, 1)));
        assertEquals(Optional.empty(), p.interchangeFor(new Device(DeviceType.EXT_DEV, ScratchDevice.COUNT)));
        assertEquals(Optional.empty(), p.interchangeFor(new Device(DeviceType.CUDA, 1)));
        assertEquals(Optional.empty(), p.interchangeFor(Device.CPU));
        assertThrows(NullPointerException.class, () -> p.interchangeFor(null));
    }
}
