package io.datamem.usm;

import io.datamem.DeviceInterchange;
import io.datamem.MemoryTraits;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * What the SYCL USM array interface needs from a SYCL backend: the USM allocation type of a block
 * and its {@code syclobj}. A SYCL backend's {@link DeviceInterchange} implements it (or returns it
 * from {@link DeviceInterchange#hook(Class)}); {@link SyclUsmArrayInterface#of} and DLPack's
 * import of {@code kDLOneAPI} memory find it through {@link MemoryTraits#hook(Class)}. Memory
 * whose backend serves none is described by its traits alone: the USM kind its memory kind stands
 * for, no {@code syclobj}.
 *
 * <p>Implementations are thread-safe and fast.
 */
public interface UsmHook {

    /**
     * The USM allocation type of a block ({@code sycl::get_pointer_type}).
     *
     * @param ptr    the block
     * @param traits the block's traits
     * @return the USM kind; by default the one the traits' memory kind stands for
     */
    default UsmKind usmKind(MemorySegment ptr, MemoryTraits traits) {
        return UsmKind.of(traits.kind());
    }

    /**
     * The {@code syclobj} of a block's SYCL USM array interface (its queue or context).
     *
     * @param ptr the block
     * @return the object, or empty (the default)
     */
    default Optional<SyclObject> syclObject(MemorySegment ptr) {
        return Optional.empty();
    }
}
