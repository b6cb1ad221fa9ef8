package io.datamem.ucx;

import io.datamem.ucx.internal.Ucp;
import io.datamem.ucx.internal.UcpLayouts;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A context's registrations by address ({@code ucp_mem_map}/{@code ucp_mem_unmap}, packing their
 * keys) and the registration cache's counts. Thread-safe: the table is a concurrent map.
 */
final class RegistrationTable {

    private static final AtomicLong KEY_IDS = new AtomicLong();

    private final UcxContext owner;
    private final MemorySegment context;
    private final ConcurrentSkipListMap<Long, UcxRegistration> registrations = new ConcurrentSkipListMap<>();
    private final AtomicLong cacheHits = new AtomicLong();
    private final AtomicLong cacheMisses = new AtomicLong();

    RegistrationTable(UcxContext owner, MemorySegment context) {
        this.owner = owner;
        this.context = context;
    }

    /** The registration through the cache: a live one covering the memory, else a new CACHED one. */
    UcxRegistration registrationFor(MemorySegment memory) {
        UcxRegistration r = covering(memory.address(), memory.byteSize());
        if (r != null) {
            cacheHits.incrementAndGet();
            return r;
        }
        if (!memory.scope().isAlive()) {
            throw new IllegalStateException("cannot register " + memory + ": its scope is closed");
        }
        cacheMisses.incrementAndGet();
        sweep(memory.address(), memory.byteSize());
        return map(memory.address(), memory.byteSize(), UcxRegistration.Origin.CACHED, memory.scope());
    }

    /** Unmaps the cached registrations overlapping the memory; returns how many. */
    int evict(MemorySegment memory) {
        int n = 0;
        for (UcxRegistration r : overlapping(memory.address(), Math.max(1, memory.byteSize()))) {
            if (r.origin() == UcxRegistration.Origin.CACHED) {
                unmap(r);
                n++;
            }
        }
        return n;
    }

    /** Unmaps the cached registrations whose scope is closed; returns how many. */
    int sweepCache() {
        int n = 0;
        for (UcxRegistration r : registrations.values()) {
            if (r.origin() == UcxRegistration.Origin.CACHED && !r.scope().isAlive()) {
                unmap(r);
                n++;
            }
        }
        return n;
    }

    int size() {
        return registrations.size();
    }

    int count(UcxRegistration.Origin origin) {
        return (int) registrations.values().stream().filter(r -> r.origin() == origin).count();
    }

    long[] cacheCounts() {
        return new long[] {cacheHits.get(), cacheMisses.get()};
    }

    List<UcxRegistration> all() {
        return List.copyOf(registrations.values());
    }

    UcxRegistration map(long address, long byteSize, UcxRegistration.Origin origin, MemorySegment.Scope scope) {
        owner.checkOpen();
        UcxRegistration existing = overlapping(address, byteSize).stream().findFirst().orElse(null);
        if (existing != null) {
            throw new IllegalStateException("cannot register 0x" + Long.toHexString(address) + " (" + byteSize
                    + " bytes): it overlaps " + existing);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(UcpLayouts.MEM_MAP_PARAMS);
            params.set(JAVA_LONG, 0, UcpLayouts.MEM_MAP_PARAM_FIELD_ADDRESS | UcpLayouts.MEM_MAP_PARAM_FIELD_LENGTH);
            params.set(ADDRESS, 8, MemorySegment.ofAddress(address));
            params.set(JAVA_LONG, 16, byteSize);
            MemorySegment out = arena.allocate(ADDRESS);
            UcxChecks.check(Ucp.memMap(context, params, out), "ucp_mem_map of 0x" + Long.toHexString(address), null, byteSize);
            UcxRegistration r = new UcxRegistration(owner, out.get(ADDRESS, 0), address, byteSize, origin,
                    KEY_IDS.incrementAndGet(), scope);
            registrations.put(address, r);
            return r;
        }
    }

    /** {@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}; null when UCX has no memory. */
    UcxRegistration allocate(long byteSize) {
        owner.checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(UcpLayouts.MEM_MAP_PARAMS);
            params.set(JAVA_LONG, 0, UcpLayouts.MEM_MAP_PARAM_FIELD_ADDRESS | UcpLayouts.MEM_MAP_PARAM_FIELD_LENGTH
                    | UcpLayouts.MEM_MAP_PARAM_FIELD_FLAGS | UcpLayouts.MEM_MAP_PARAM_FIELD_MEMORY_TYPE);
            params.set(ADDRESS, 8, MemorySegment.NULL);
            params.set(JAVA_LONG, 16, byteSize);
            params.set(ValueLayout.JAVA_INT, 24, UcpLayouts.MEM_MAP_ALLOCATE);
            params.set(ValueLayout.JAVA_INT, 32, UcpLayouts.MEMORY_TYPE_HOST);
            MemorySegment out = arena.allocate(ADDRESS);
            int st = Ucp.memMap(context, params, out);
            if (st != UcpLayouts.UCS_OK) {
                return null;
            }
            MemorySegment memh = out.get(ADDRESS, 0);
            MemorySegment attr = arena.allocate(UcpLayouts.MEM_ATTR);
            attr.set(JAVA_LONG, 0, UcpLayouts.MEM_ATTR_FIELD_ADDRESS | UcpLayouts.MEM_ATTR_FIELD_LENGTH);
            st = Ucp.memQuery(memh, attr);
            if (st != UcpLayouts.UCS_OK) {
                Ucp.memUnmap(context, memh);
                UcxChecks.check(st, "ucp_mem_query", null, byteSize);
            }
            long address = attr.get(ADDRESS, 8).address();
            long length = attr.get(JAVA_LONG, 16);
            UcxRegistration r = new UcxRegistration(owner, memh, address, length, UcxRegistration.Origin.ALLOCATED,
                    KEY_IDS.incrementAndGet(), null);
            registrations.put(address, r);
            return r;
        }
    }

    void unmap(UcxRegistration r) {
        if (!r.markDead()) {
            return;
        }
        registrations.remove(r.address(), r);
        if (!owner.isClosed()) {
            int st = Ucp.memUnmap(context, r.memh());
            UcxChecks.check(st, "ucp_mem_unmap of " + r, null, r.byteSize());
        }
    }

    RemoteRegion pack(UcxRegistration r) {
        try (Arena arena = Arena.ofConfined()) {
            owner.checkOpen();
            MemorySegment buf = arena.allocate(ADDRESS);
            MemorySegment len = arena.allocate(JAVA_LONG);
            UcxChecks.check(Ucp.rkeyPack(context, r.memh(), buf, len), "ucp_rkey_pack of " + r, null, r.byteSize());
            MemorySegment b = buf.get(ADDRESS, 0);
            try {
                byte[] key = b.reinterpret(len.get(JAVA_LONG, 0)).toArray(ValueLayout.JAVA_BYTE);
                return RemoteRegion.local(owner.id(), r.keyId(), r.address(), r.byteSize(), key);
            } finally {
                Ucp.rkeyBufferRelease(b);
            }
        }
    }

    UcxRegistration covering(long address, long byteSize) {
        Map.Entry<Long, UcxRegistration> e = registrations.floorEntry(address);
        if (e == null) {
            return null;
        }
        UcxRegistration r = e.getValue();
        if (!r.covers(address, byteSize)) {
            return null;
        }
        if (r.origin() == UcxRegistration.Origin.CACHED && !r.scope().isAlive()) {
            unmap(r);
            return null;
        }
        return r;
    }

    List<UcxRegistration> overlapping(long address, long byteSize) {
        List<UcxRegistration> out = new ArrayList<>();
        Map.Entry<Long, UcxRegistration> below = registrations.floorEntry(address);
        if (below != null && below.getKey() + below.getValue().byteSize() > address) {
            out.add(below.getValue());
        }
        for (UcxRegistration r : registrations.subMap(address, false, address + byteSize, false).values()) {
            out.add(r);
        }
        return out;
    }

    /** Unmaps cached registrations whose scope is closed, and those overlapping a new range. */
    void sweep(long address, long byteSize) {
        for (UcxRegistration r : overlapping(address, byteSize)) {
            if (r.origin() == UcxRegistration.Origin.CACHED) {
                unmap(r);
            }
        }
        sweepCache();
    }
}
