package io.datamem.ucx;

import io.datamem.DataMem;
import io.datamem.DataMemAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two contexts in one JVM, connected through UCX over one transport: bit-exact put, get, send and
 * receive, and every refusal (size mismatch, truncated message, key for a freed block, timeout).
 */
@ParameterizedClass(name = "UCX_TLS={0}")
@ValueSource(strings = {"tcp", "sm"})
class UcxInProcessTest {

    private final String transports;
    private UcxContext a;
    private UcxContext b;
    private UcxEndpoint ab;
    private UcxEndpoint ba;
    private static final javax.crypto.SecretKey KEY = new javax.crypto.spec.SecretKeySpec(random(32, 40), "HmacSHA256");

    UcxInProcessTest(String transports) {
        this.transports = transports;
    }

    @BeforeEach
    void connect() {
        UcxTests.assumeUcx();
        UcxContext.Options o = UcxContext.Options.defaults().withTransports(transports).withTimeout(Duration.ofSeconds(5));
        a = UcxContext.open(o.withName("a"));
        b = UcxContext.open(o.withName("b"));
        ab = a.connect(b.workerAddress(), "b", KEY);
        ba = b.connect(a.workerAddress(), "a", KEY);
    }

    @AfterEach
    void close() {
        if (a != null) {
            a.close();
            b.close();
            assertEquals(0, a.liveRegistrations(), "registrations left on a");
            assertEquals(0, b.liveRegistrations(), "registrations left on b");
        }
    }

    private static byte[] random(int n, long seed) {
        byte[] bytes = new byte[n];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void putAndGetAreBitExact() {
        DataMemAllocator regB = UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(), b);
        int n = 1 << 20;
        MemorySegment target = regB.malloc(n).reinterpret(n);
        try (Arena arena = Arena.ofConfined()) {
            RemoteRegion region = RemoteRegion.fromBytes(b.export(target).toBytes(KEY), KEY);
            MemorySegment src = arena.allocate(n);
            byte[] data = random(n, 1);
            src.copyFrom(MemorySegment.ofArray(data));
            ab.put(src, region, 0);
            assertArrayEquals(data, target.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            target.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 17, (byte) 99);
            MemorySegment back = arena.allocate(n);
            ab.get(region, 0, back);
            data[17] = 99;
            assertArrayEquals(data, back.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            MemorySegment part = arena.allocate(100);
            ab.get(region, n - 100, part);
            assertEquals(data[n - 1], part.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 99));
            IndexOutOfBoundsException tooLong = assertThrows(IndexOutOfBoundsException.class,
                    () -> ab.put(arena.allocate(n), region, 1));
            assertTrue(tooLong.getMessage().contains(n + " bytes at offset 1"), tooLong.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> ab.get(region, -1, part));
            assertEquals(3, a.cacheCounts()[1], "the source, the copy back and the part were each registered once, through the cache");
        }
        assertEquals(3, a.sweepCache(), "the source, the copy back and the part, cached until their arena closed");
        assertEquals(0, a.liveRegistrations());
        regB.free(target, n);
        assertEquals(0, b.liveRegistrations(UcxRegistration.Origin.BLOCK));
    }

    @Test
    void aKeyForAFreedBlockIsRefusedByItsOwner() {
        DataMemAllocator regB = UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(), b);
        MemorySegment block = regB.malloc(4096).reinterpret(4096);
        UcxRegistration r = b.registrationOf(block.address(), 4096);
        assertEquals(UcxRegistration.Origin.BLOCK, r.origin());
        assertThrows(IllegalStateException.class, r::close, "an allocator's registration is not the caller's");
        regB.free(block, 4096);
        assertFalse(r.isLive());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.export(block));
        assertTrue(e.getMessage().contains("no live UCX registration"), e.getMessage());
        IllegalStateException e2 = assertThrows(IllegalStateException.class, r::remoteRegion);
        assertTrue(e2.getMessage().contains("the block was freed"), e2.getMessage());
    }

    @Test
    void forgedAndCorruptedRegionsAreRefusedBeforeUcxSeesThem() {
        DataMemAllocator regB = UcxRegisteringAdaptor.of(DataMem.handler("aligned:64").allocator(), b);
        int n = 4096;
        MemorySegment target = regB.malloc(n).reinterpret(n);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment part = arena.allocate(64);
            byte[] sealed = b.export(target).toBytes(KEY);
            int refusedOnReceipt = 0;
            int refusedByTheEndpoint = 0;
            for (int bit = 0; bit < sealed.length * 8; bit++) {
                byte[] flipped = sealed.clone();
                flipped[bit / 8] ^= (byte) (1 << (bit % 8));
                assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(flipped, KEY), "bit " + bit);
                RemoteRegion r;
                try {
                    r = RemoteRegion.fromBytes(flipped);
                } catch (IllegalArgumentException e) {
                    refusedOnReceipt++;
                    continue;
                }
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ab.get(r, 0, part),
                        "bit " + bit);
                assertTrue(e.getMessage().contains("MAC"), e.getMessage());
                refusedByTheEndpoint++;
            }
            assertTrue(refusedOnReceipt > 0 && refusedByTheEndpoint > 0, refusedOnReceipt + " / " + refusedByTheEndpoint);
            Random random = new Random(41);
            for (int i = 0; i < 2000; i++) {
                byte[] junk = new byte[random.nextInt(sealed.length * 2)];
                random.nextBytes(junk);
                if (i % 2 == 0 && junk.length >= 8) {
                    System.arraycopy(sealed, 0, junk, 0, 8);   // a valid header over random bytes
                }
                assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(junk, KEY));
                try {
                    RemoteRegion r = RemoteRegion.fromBytes(junk);
                    assertThrows(IllegalArgumentException.class, () -> ab.get(r, 0, part));
                } catch (IllegalArgumentException expected) {
                    // refused on receipt
                }
            }
            javax.crypto.SecretKey other = new javax.crypto.spec.SecretKeySpec(random(32, 42), "HmacSHA256");
            byte[] otherKey = b.export(target).toBytes(other);
            assertTrue(assertThrows(IllegalArgumentException.class, () -> RemoteRegion.fromBytes(otherKey, KEY))
                    .getMessage().contains("MAC"));
            assertTrue(assertThrows(IllegalArgumentException.class,
                    () -> ab.get(RemoteRegion.fromBytes(otherKey), 0, part)).getMessage().contains("MAC"));
            RemoteRegion unsealed = RemoteRegion.fromBytes(b.export(target).toBytes());
            assertTrue(assertThrows(IllegalArgumentException.class, () -> ab.get(unsealed, 0, part)).getMessage()
                    .contains("not sealed"));
            RemoteRegion made = new RemoteRegion("b", 1, target.address(), n, random(80, 43));
            assertThrows(IllegalArgumentException.class, () -> ab.get(made, 0, part));
            try (UcxEndpoint keyless = a.connect(b.workerAddress(), "b without a key")) {
                assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> keyless.get(RemoteRegion.fromBytes(sealed), 0, part)).getMessage().contains("no region key"));
            }
            // the valid form still works, on receipt and end to end
            target.asSlice(0, 64).fill((byte) 7);
            ab.get(RemoteRegion.fromBytes(sealed, KEY), 0, part);
            assertEquals(7, part.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 63));
            ab.get(RemoteRegion.fromBytes(sealed), 0, part);
        }
        a.sweepCache();
        regB.free(target, n);
    }

    @Test
    void exportingAHeapSegmentIsAnIllegalArgument() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> b.export(MemorySegment.ofArray(new byte[64])));
        assertTrue(e.getMessage().contains("heap segment"), e.getMessage());
    }

    @Test
    void sendAndReceiveAreBitExactAndRefuseLongMessages() {
        int n = 300_000;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(n);
            byte[] data = random(n, 2);
            src.copyFrom(MemorySegment.ofArray(data));
            MemorySegment dst = arena.allocate(n);
            // a message is delivered once both sides progress: send eagerly from a, receive on b
            Thread t = Thread.ofPlatform().start(() -> ab.send(7, src));
            assertEquals(n, ba.receive(7, dst));
            join(t);
            assertArrayEquals(data, dst.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));

            Thread t2 = Thread.ofPlatform().start(() -> ab.send(8, src));
            MemorySegment small = arena.allocate(n - 1);
            UcxException e = assertThrows(UcxException.class, () -> ba.receive(8, small));
            assertTrue(e.getMessage().contains(n + " bytes and the buffer " + (n - 1) + " bytes"), e.getMessage());
            assertEquals(n, ba.receive(8, dst), "the long message stays queued for a large enough buffer");
            join(t2);
        }
    }

    @Test
    void aReceiveWithoutMessageTimesOut() {
        UcxContext quick = UcxContext.open(UcxContext.Options.defaults().withTransports(transports)
                .withTimeout(Duration.ofMillis(200)));
        try (Arena arena = Arena.ofConfined()) {
            long t0 = System.nanoTime();
            UcxException e = assertThrows(UcxException.class, () -> quick.receive(99, arena.allocate(8)));
            assertTrue(e.timedOut(), e.getMessage());
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L);
        } finally {
            quick.close();
        }
    }

    @Test
    void theCacheMapsOnceAndForgetsClosedMemory() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(1 << 16);
            UcxRegistration r1 = a.registrationFor(s);
            UcxRegistration r2 = a.registrationFor(s.asSlice(100, 1000));
            assertSame(r1, r2);
            assertEquals(UcxRegistration.Origin.CACHED, r1.origin());
            assertThrows(IllegalStateException.class, () -> a.register(s), "overlaps the cached registration");
            assertEquals(1, a.evict(s));
            UcxRegistration explicit = a.register(s);
            assertEquals(UcxRegistration.Origin.EXPLICIT, explicit.origin());
            explicit.close();
            explicit.close();
            a.registrationFor(s);
        }
        try (Arena arena = Arena.ofConfined()) {
            a.registrationFor(arena.allocate(64));   // sweeps the first arena's registration
            assertEquals(1, a.liveRegistrations());
        }
        assertThrows(IllegalArgumentException.class, () -> a.register(MemorySegment.ofArray(new byte[8])));
    }

    private static void join(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertFalse(t.isAlive());
    }
}
