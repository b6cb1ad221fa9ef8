package io.datamem.dlpack;

/**
 * A DLPack version ({@code DLPackVersion}). A change of major version changes the layout of
 * {@code DLManagedTensorVersioned}; a minor version adds enumeration values (device types, type
 * codes) and keeps the layout.
 *
 * @param major the major version; 0 stands for the unversioned legacy {@code DLManagedTensor}
 * @param minor the minor version
 */
public record DLPackVersion(int major, int minor) implements Comparable<DLPackVersion> {

    /**
     * The version datamem produces and reads: DLPack 1.3 (strides always set, as 1.2 requires;
     * device types through {@code kDLTrn}; the float8, float6 and float4 type codes of 1.1).
     */
    public static final DLPackVersion CURRENT = new DLPackVersion(1, 3);

    /** DLPack 1.2: {@code kDLTrn}, strides required, the C exchange API. */
    public static final DLPackVersion V1_2 = new DLPackVersion(1, 2);

    /** DLPack 1.1: the float8, float6 and float4 type codes, {@code IS_SUBBYTE_TYPE_PADDED}. */
    public static final DLPackVersion V1_1 = new DLPackVersion(1, 1);

    /** DLPack 1.0, the first version with {@code DLManagedTensorVersioned}. */
    public static final DLPackVersion V1_0 = new DLPackVersion(1, 0);

    /**
     * The versions before 1.0, exchanged as the legacy {@code DLManagedTensor} (a consumer that
     * passes no {@code max_version}).
     */
    public static final DLPackVersion LEGACY = new DLPackVersion(0, 0);

    /**
     * Validates the components.
     *
     * @throws IllegalArgumentException if a component is negative
     */
    public DLPackVersion {
        if (major < 0 || minor < 0) {
            throw new IllegalArgumentException("DLPack version " + major + "." + minor + " (expected: >= 0.0)");
        }
    }

    /**
     * Whether tensors of this version use the legacy, unversioned struct.
     *
     * @return true for major version 0
     */
    public boolean isLegacy() {
        return major < 1;
    }

    @Override
    public int compareTo(DLPackVersion other) {
        return major != other.major ? Integer.compare(major, other.major) : Integer.compare(minor, other.minor);
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
