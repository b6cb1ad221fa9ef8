package io.datamem.sycl;

import io.datamem.usm.UsmKind;

import java.util.Objects;

/**
 * What a SYCL context knows about a pointer: the USM kind, base address, size and device of the
 * allocation that contains it (interior pointers included).
 *
 * <p>A pointer that is not USM memory of the context (host memory from {@code malloc}, memory of
 * another context, a freed block) is {@link UsmKind#UNKNOWN} with base 0, size 0 and no device.
 *
 * @param kind        the allocation's kind
 * @param baseAddress the allocation's first byte, 0 when unknown
 * @param byteSize    the allocation's size in bytes, 0 when unknown
 * @param device      the device the allocation is bound to; null for host allocations (bound to
 *                    the whole context) and unknown pointers
 */
public record UsmPointerInfo(UsmKind kind, long baseAddress, long byteSize, SyclDevice device) {

    /** The answer for a pointer that is not USM memory of the context. */
    public static final UsmPointerInfo UNKNOWN = new UsmPointerInfo(UsmKind.UNKNOWN, 0, 0, null);

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code kind} is null
     * @throws IllegalArgumentException if {@code byteSize} is negative, or an unknown pointer has a
     *                                  base, size or device
     */
    public UsmPointerInfo {
        Objects.requireNonNull(kind, "kind");
        if (byteSize < 0) {
            throw new IllegalArgumentException("byteSize: " + byteSize + " (expected: >= 0)");
        }
        if (kind == UsmKind.UNKNOWN && (baseAddress != 0 || byteSize != 0 || device != null)) {
            throw new IllegalArgumentException("an unknown pointer has no base, size or device (got base 0x"
                    + Long.toHexString(baseAddress) + ", " + byteSize + " bytes, device " + device + ")");
        }
    }

    /**
     * Whether an address lies in the allocation.
     *
     * @param address an address
     * @return true if {@code baseAddress <= address < baseAddress + byteSize}, or the allocation is
     *         empty and the address is its base
     */
    public boolean contains(long address) {
        if (kind == UsmKind.UNKNOWN) {
            return false;
        }
        return address == baseAddress || Long.compareUnsigned(address - baseAddress, byteSize) < 0;
    }

    @Override
    public String toString() {
        return kind == UsmKind.UNKNOWN ? "unknown" : kind.dpctlName() + " allocation of " + byteSize + " bytes at 0x"
                + Long.toHexString(baseAddress) + (device == null ? "" : " on " + device.filterString());
    }
}
