package io.datamem.cuda.provider;

import io.datamem.DataMemAllocator;
import io.datamem.Device;
import io.datamem.MemoryKind;
import io.datamem.cuda.CudaDeviceAllocator;
import io.datamem.cuda.CudaManagedAllocator;
import io.datamem.cuda.CudaPinnedAllocator;
import io.datamem.cuda.CudaRegisteredAllocator;
import io.datamem.cuda.internal.CudaInterchange;
import io.datamem.cuda.internal.CudaRuntime;
import io.datamem.internal.Libc;
import io.datamem.spi.Availability;
import io.datamem.spi.DataMemProvider;
import io.datamem.DeviceInterchange;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;
import java.util.Optional;

/**
 * Provides {@code cuda:pinned}, {@code cuda:device=N}, {@code cuda:managed=N} and
 * {@code cuda:registered(UPSTREAM)} ({@link CudaTerm} has the grammar). Pooled variants need no
 * provider of their own: {@code pool(cuda:pinned)}. Its availability comes from
 * {@link CudaRuntime#availability()}: without a driver it is unavailable with the reason, and no
 * CUDA handler can be made.
 */
public final class CudaProvider implements DataMemProvider {

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public CudaProvider() {
    }

    @Override
    public String name() {
        return CudaTerm.FAMILY;
    }

    @Override
    public Role role() {
        return Role.LEAF;
    }

    @Override
    public List<String> names() {
        return List.of("cuda:pinned[=N][,portable,mapped,writecombined]", "cuda:device=N",
                "cuda:managed=N[,attach=host]", "cuda:registered[=N][,portable,mapped,readonly](UPSTREAM)");
    }

    @Override
    public boolean accepts(ProviderTerm term) {
        return term.family().equals(CudaTerm.FAMILY);
    }

    @Override
    public Availability availability() {
        return CudaRuntime.availability();
    }

    /**
     * The CUDA hook for imported memory on {@code kDLCUDA}, {@code kDLCUDAHost} and
     * {@code kDLCUDAManaged} devices. Loads nothing: the hook reports CUDA unavailable when used
     * without a GPU.
     *
     * @param device the device of imported memory
     * @return the hook for CUDA devices, else empty
     */
    @Override
    public Optional<DeviceInterchange> interchangeFor(Device device) {
        MemoryKind kind = switch (device.type()) {
            case CUDA -> MemoryKind.DEVICE;
            case CUDA_HOST -> MemoryKind.HOST_PINNED;
            case CUDA_MANAGED -> MemoryKind.MANAGED;
            default -> null;
        };
        return kind == null ? Optional.empty() : Optional.of(CudaInterchange.of(kind, device.id()));
    }

    @Override
    public DataMemAllocator createAllocator(ProviderTerm term, ProviderContext context) {
        String handlerName = context.handlerName();
        CudaTerm t = CudaTerm.parse(term, handlerName);
        CudaRuntime.require();
        return switch (t.kind()) {
            case PINNED -> CudaPinnedAllocator.builder().device(t.device()).portable(t.portable()).mapped(t.mapped())
                    .writeCombined(t.writeCombined()).name(handlerName).build();
            case DEVICE -> CudaDeviceAllocator.of(t.device(), handlerName);
            case MANAGED -> CudaManagedAllocator.of(t.device(), t.attach(), handlerName);
            case REGISTERED -> {
                DataMemAllocator upstream = t.upstream() == null ? context.resolveAllocator("aligned:" + Libc.pageSize())
                        : context.resolveAllocator(t.upstream());
                try {
                    CudaRegisteredAllocator.checkUpstream(upstream);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("handler name '" + handlerName + "': '" + term + "': "
                            + e.getMessage(), e);
                }
                yield CudaRegisteredAllocator.builder(upstream).device(t.device()).portable(t.portable())
                        .mapped(t.mapped()).readOnly(t.readOnly()).name(handlerName).build();
            }
        };
    }
}
