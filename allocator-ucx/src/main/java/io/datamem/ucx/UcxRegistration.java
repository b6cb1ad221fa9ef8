package io.datamem.ucx;

import java.lang.foreign.MemorySegment;

/**
 * A region of this process's memory registered with a {@link UcxContext} ({@code ucp_mem_map}): the
 * local side of every transfer, and what {@link UcxContext#export} packs a remote key for.
 *
 * <p>Who unmaps it depends on its {@link Origin}: the caller closes an {@link Origin#EXPLICIT}
 * registration; the {@code +ucx} adaptor and the {@code ucx} allocator unmap theirs when the block is
 * freed; the context's cache unmaps a {@link Origin#CACHED} one when the memory's scope is closed
 * and at {@link UcxContext#close()}. Thread-safe.
 */
public final class UcxRegistration implements AutoCloseable {

    /** Where a registration comes from, and so who unmaps it. */
    public enum Origin {
        /** {@link UcxContext#register}: the caller closes it. */
        EXPLICIT,
        /** A block of the {@code +ucx} adaptor: unmapped when the block is freed. */
        BLOCK,
        /** A block of the {@code ucx} allocator, which UCX allocated: unmapped (and freed) with the block. */
        ALLOCATED,
        /** The context's registration cache ({@link UcxContext#registrationFor}). */
        CACHED
    }

    private final UcxContext context;
    private final MemorySegment memh;
    private final long address;
    private final long byteSize;
    private final Origin origin;
    private final long keyId;
    private final MemorySegment.Scope scope;
    private volatile boolean live = true;
    private volatile RemoteRegion exported;

    UcxRegistration(UcxContext context, MemorySegment memh, long address, long byteSize, Origin origin, long keyId,
                    MemorySegment.Scope scope) {
        this.context = context;
        this.memh = memh;
        this.address = address;
        this.byteSize = byteSize;
        this.origin = origin;
        this.keyId = keyId;
        this.scope = scope;
    }

    /**
     * The registered memory's address.
     *
     * @return the address
     */
    public long address() {
        return address;
    }

    /**
     * The registered memory's size.
     *
     * @return the size in bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * Where it comes from.
     *
     * @return the origin
     */
    public Origin origin() {
        return origin;
    }

    /**
     * The context it is registered with.
     *
     * @return the context
     */
    public UcxContext context() {
        return context;
    }

    /**
     * Whether it is still registered.
     *
     * @return false once unmapped
     */
    public boolean isLive() {
        return live;
    }

    /**
     * This registration's number, which its exported regions carry.
     *
     * @return a number unique within the process
     */
    public long keyId() {
        return keyId;
    }

    /**
     * The region a peer needs to reach this memory: its address, size and packed remote key (packed
     * once, on the first call).
     *
     * @return the region
     * @throws IllegalStateException if the registration was unmapped (the block was freed): a key
     *                               for freed memory is never handed out
     * @throws UcxException          if {@code ucp_rkey_pack} fails
     */
    public RemoteRegion remoteRegion() {
        RemoteRegion r = exported;
        if (r == null) {
            synchronized (this) {
                checkLive("export a remote key for");
                r = exported;
                if (r == null) {
                    r = context.pack(this);
                    exported = r;
                }
            }
        }
        checkLive("export a remote key for");
        return r;
    }

    /**
     * Unmaps an {@link Origin#EXPLICIT} registration; idempotent.
     *
     * @throws IllegalStateException if this registration belongs to an allocator or the cache
     *                               (they unmap it when the memory is freed)
     */
    @Override
    public void close() {
        if (origin != Origin.EXPLICIT) {
            throw new IllegalStateException(this + " belongs to " + (origin == Origin.CACHED ? "the registration"
                    + " cache (UcxContext.evict releases it)" : "its allocator (freeing the block unmaps it)"));
        }
        context.unmap(this);
    }

    MemorySegment memh() {
        return memh;
    }

    MemorySegment.Scope scope() {
        return scope;
    }

    boolean markDead() {
        synchronized (this) {
            boolean was = live;
            live = false;
            return was;
        }
    }

    void checkLive(String what) {
        if (!live) {
            throw new IllegalStateException("cannot " + what + " " + this + ": it was unmapped"
                    + (origin == Origin.BLOCK || origin == Origin.ALLOCATED ? " (the block was freed)" : ""));
        }
    }

    boolean covers(long start, long length) {
        return start >= address && length <= byteSize && start - address <= byteSize - length;
    }

    @Override
    public String toString() {
        return "UcxRegistration[" + origin.name().toLowerCase(java.util.Locale.ROOT) + " #" + keyId + ", 0x"
                + Long.toHexString(address) + ", " + byteSize + " bytes" + (live ? "" : ", unmapped") + "]";
    }
}
