package io.datamem.dlpack;

import io.datamem.Device;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * The arguments of {@code __dlpack__(stream=, max_version=, dl_device=, copy=)}.
 *
 * @param maxVersion the highest version the consumer reads ({@code max_version});
 *                   {@link DLPackVersion#LEGACY} when it passes none, which gets a legacy
 *                   {@code DLManagedTensor}
 * @param copy       whether to copy ({@code copy})
 * @param stream     the consumer's stream ({@code stream}), empty for {@code None}; -1 asks for
 *                   no synchronisation
 * @param dlDevice   the device the consumer wants the tensor on ({@code dl_device}), or null for
 *                   the array's own; a device other than the array's must be the CPU
 */
public record DLPackOptions(DLPackVersion maxVersion, CopyMode copy, OptionalLong stream, Device dlDevice) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code maxVersion}, {@code copy} or {@code stream} is null
     */
    public DLPackOptions {
        Objects.requireNonNull(maxVersion, "maxVersion");
        Objects.requireNonNull(copy, "copy");
        Objects.requireNonNull(stream, "stream");
    }

    /**
     * The defaults of a current consumer: {@code max_version} {@link DLPackVersion#CURRENT} (1.3), {@code copy=None}, no
     * stream, the array's own device.
     *
     * @return the default options
     */
    public static DLPackOptions defaults() {
        return new DLPackOptions(DLPackVersion.CURRENT, CopyMode.IF_NEEDED, OptionalLong.empty(), null);
    }

    /**
     * These options with another {@code max_version}.
     *
     * @param version the consumer's highest version
     * @return a copy
     * @throws NullPointerException if {@code version} is null
     */
    public DLPackOptions withMaxVersion(DLPackVersion version) {
        return new DLPackOptions(version, copy, stream, dlDevice);
    }

    /**
     * These options with another {@code copy}.
     *
     * @param mode the copy mode
     * @return a copy
     * @throws NullPointerException if {@code mode} is null
     */
    public DLPackOptions withCopy(CopyMode mode) {
        return new DLPackOptions(maxVersion, mode, stream, dlDevice);
    }

    /**
     * These options with a consumer stream.
     *
     * @param consumerStream the stream as DLPack encodes it for the device type (-1: no
     *                       synchronisation)
     * @return a copy
     */
    public DLPackOptions withStream(long consumerStream) {
        return new DLPackOptions(maxVersion, copy, OptionalLong.of(consumerStream), dlDevice);
    }

    /**
     * These options with a target device.
     *
     * @param device the device the consumer wants, or null for the array's own
     * @return a copy
     */
    public DLPackOptions withDlDevice(Device device) {
        return new DLPackOptions(maxVersion, copy, stream, device);
    }
}
