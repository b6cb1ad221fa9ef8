package io.datamem.cuda;

import io.datamem.cuda.internal.CudaDriver;

import java.util.Objects;

/**
 * A CUDA device as the driver describes it.
 *
 * @param ordinal                the device ordinal (as {@code cudaSetDevice} and DLPack's
 *                               {@code device_id} number devices, after {@code CUDA_VISIBLE_DEVICES})
 * @param name                   the product name, for example {@code NVIDIA H100 80GB HBM3}
 * @param totalByteSize          the device memory, in bytes
 * @param pciBusId               the PCI address, for example {@code 0000:3b:00.0}, or empty if unknown;
 *                               {@code numa:bind=pci:ADDRESS} binds host memory near the device
 * @param computeCapabilityMajor the compute capability's major version (9 for Hopper), 0 if unknown
 * @param computeCapabilityMinor the compute capability's minor version
 */
public record CudaDevice(int ordinal, String name, long totalByteSize, String pciBusId, int computeCapabilityMajor,
                         int computeCapabilityMinor) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code name} or {@code pciBusId} is null
     * @throws IllegalArgumentException if {@code ordinal} or {@code totalByteSize} is negative
     */
    public CudaDevice {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pciBusId, "pciBusId");
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal: " + ordinal + " (expected: >= 0)");
        }
        if (totalByteSize < 0) {
            throw new IllegalArgumentException("totalByteSize: " + totalByteSize + " (expected: >= 0)");
        }
    }

    @Override
    public String toString() {
        return new CudaDriver.DeviceProperties(ordinal, name, totalByteSize, pciBusId, computeCapabilityMajor,
                computeCapabilityMinor).toString();
    }
}
