package io.datamem.usm;

import java.util.Objects;

/**
 * The {@code syclobj} of a SYCL USM array interface: what names the SYCL context a USM pointer is
 * bound to. dpctl accepts a queue, a context (as objects or as named capsules carrying a
 * {@code DPCTLSyclQueueRef} / {@code DPCTLSyclContextRef}, that is a {@code sycl::queue*} /
 * {@code sycl::context*}), or a filter selector string; the three records are those forms.
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
     * A context: dpctl's capsule named {@code "SyclContextRef"}.
     *
     * @param contextRef the {@code sycl::context*} ({@code DPCTLSyclContextRef})
     */
    record Context(long contextRef) implements SyclObject {
        /**
         * Validates the component.
         *
         * @throws IllegalArgumentException if {@code contextRef} is 0
         */
        public Context {
            if (contextRef == 0) {
                throw new IllegalArgumentException("contextRef: 0 (expected: a sycl::context*)");
            }
        }

        /**
         * The name dpctl gives a capsule carrying this reference.
         *
         * @return {@code "SyclContextRef"}
         */
        public String capsuleName() {
            return "SyclContextRef";
        }
    }

    /**
     * A filter selector string, such as {@code "level_zero:gpu:0"}: the default context of the
     * platform of the device it selects.
     *
     * @param selector the filter selector string
     */
    record FilterSelector(String selector) implements SyclObject {
        /**
         * Validates the component.
         *
         * @throws NullPointerException     if {@code selector} is null
         * @throws IllegalArgumentException if {@code selector} is blank
         */
        public FilterSelector {
            Objects.requireNonNull(selector, "selector");
            if (selector.isBlank()) {
                throw new IllegalArgumentException("selector: blank (expected: a SYCL filter selector string)");
            }
        }
    }
}
