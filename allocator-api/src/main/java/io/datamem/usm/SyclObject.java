package io.datamem.usm;

import java.util.Objects;

/**
 * The {@code syclobj} of a SYCL USM array interface: what names the SYCL context a USM pointer is
 * bound to, in one of two forms. {@link Queue} is dpctl's queue capsule (a {@code sycl::queue*}),
 * for a backend that runs on a SYCL runtime. {@link NativeHandles} names the context by its
 * backend-native handles, for a backend that reaches USM through a backend API without a SYCL
 * runtime of its own (datamem's SYCL backend uses OpenCL): a consumer adopts them through SYCL's
 * backend interoperability.
 *
 * <p>dpctl also accepts a context capsule and a filter selector string. Those are what a Python
 * producer holding dpctl objects passes; datamem only produces the interface, and a Java backend
 * has either a queue or native handles, so they have no form here.
 */
public sealed interface SyclObject {

    /**
     * A queue, whose context the pointer is bound to: dpctl's capsule named {@code "SyclQueueRef"}.
     *
     * @param queueRef the {@code sycl::queue*} ({@code DPCTLSyclQueueRef})
     */
    record Queue(long queueRef) implements SyclObject {
        /**
         * Validates the component.
         *
         * @throws IllegalArgumentException if {@code queueRef} is 0
         */
        public Queue {
            if (queueRef == 0) {
                throw new IllegalArgumentException("queueRef: 0 (expected: a sycl::queue*)");
            }
        }

        /**
         * The name dpctl gives a capsule carrying this reference.
         *
         * @return {@code "SyclQueueRef"}
         */
        public String capsuleName() {
            return "SyclQueueRef";
        }
    }

    /**
     * The backend-native handles of the context a USM pointer is bound to, with a device and a queue
     * of it: what a SYCL program adopts through backend interoperability
     * ({@code sycl::make_context<backend>(context)}, {@code sycl::make_device<backend>(device)},
     * {@code sycl::make_queue<backend>(queue, ctx)}), after which the pointer is a USM pointer of the
     * adopted context. dpctl's {@code syclobj} has no such form: a bridge to Python makes a SYCL
     * queue from the handles through interop and hands dpctl that queue (or an object whose
     * {@code _get_capsule()} returns its {@code "SyclQueueRef"} capsule).
     *
     * @param backend the SYCL backend the handles belong to, as {@code sycl::backend} names it
     *                ({@value #OPENCL}, {@code level_zero}, ...)
     * @param context the native context ({@code cl_context} for OpenCL)
     * @param device  the native device the memory is associated with ({@code cl_device_id})
     * @param queue   a native queue of that context and device ({@code cl_command_queue}), or 0 for
     *                none (the consumer then makes its own queue on the context)
     */
    record NativeHandles(String backend, long context, long device, long queue) implements SyclObject {

        /** The OpenCL backend's name: the handles are {@code cl_context}, {@code cl_device_id}, {@code cl_command_queue}. */
        public static final String OPENCL = "opencl";

        /**
         * Validates the components.
         *
         * @throws NullPointerException     if {@code backend} is null
         * @throws IllegalArgumentException if {@code backend} is not a lower-case identifier, or
         *                                  {@code context} or {@code device} is 0
         */
        public NativeHandles {
            Objects.requireNonNull(backend, "backend");
            if (!backend.matches("[a-z][a-z0-9_]*")) {
                throw new IllegalArgumentException("backend: '" + backend + "' (expected: a sycl::backend name such"
                        + " as opencl or level_zero)");
            }
            if (context == 0) {
                throw new IllegalArgumentException("context: 0 (expected: a native context handle)");
            }
            if (device == 0) {
                throw new IllegalArgumentException("device: 0 (expected: a native device handle)");
            }
        }
    }
}
