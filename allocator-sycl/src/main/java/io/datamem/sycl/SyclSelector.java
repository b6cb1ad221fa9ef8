package io.datamem.sycl;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A device selector: dpctl's filter selector string, or the default selector.
 *
 * <p>A filter selector is one or more filters separated by {@code ,}; a filter is
 * {@code BACKEND:TYPE:NUMBER} where every part is optional but at least one is present and the
 * parts keep that order: {@code opencl:gpu:0}, {@code opencl:cpu}, {@code gpu}, {@code gpu:1},
 * {@code opencl:2}, {@code 0}. {@code BACKEND} is {@code opencl} (datamem reaches SYCL devices
 * through OpenCL, so other SYCL backends are rejected); {@code TYPE} is {@code cpu}, {@code gpu} or
 * {@code accelerator}; {@code NUMBER} counts, from 0, the devices that match the other parts (a bare
 * number counts all devices). The filters are tried in order and the first that matches a device
 * selects it.
 *
 * <p>The {@linkplain #defaultSelector() default selector} prefers a device with
 * {@code cl_intel_unified_shared_memory}, and among those a GPU, then an accelerator, then a CPU,
 * then the lowest ordinal.
 *
 * @param filters the filters, in order; empty for the default selector
 */
public record SyclSelector(List<Filter> filters) {

    /** The one backend datamem's SYCL devices are reached through. */
    public static final String OPENCL = "opencl";

    private static final List<String> OTHER_BACKENDS = List.of("level_zero", "cuda", "hip", "host", "native_cpu",
            "ext_oneapi_level_zero", "ext_oneapi_cuda", "ext_oneapi_hip");

    /**
     * One filter: a backend, a type and a number, each optional.
     *
     * @param backend {@code opencl}, or null for any
     * @param type    the device type, or null for any
     * @param number  the position among the devices matching the backend and type, or -1 for the
     *                first
     */
    public record Filter(String backend, SyclDevice.Type type, int number) {

        /**
         * Validates the components.
         *
         * @throws IllegalArgumentException if the backend is not null or {@code opencl}, the type is
         *                                  {@link SyclDevice.Type#CUSTOM}, the number is below -1, or
         *                                  every part is absent
         */
        public Filter {
            if (backend != null && !backend.equals(OPENCL)) {
                throw new IllegalArgumentException("backend: '" + backend + "' (expected: opencl)");
            }
            if (type == SyclDevice.Type.CUSTOM) {
                throw new IllegalArgumentException("type: custom (expected: cpu, gpu or accelerator)");
            }
            if (number < -1) {
                throw new IllegalArgumentException("number: " + number + " (expected: >= 0, or -1 for any)");
            }
            if (backend == null && type == null && number < 0) {
                throw new IllegalArgumentException("filter: empty (expected: at least a backend, a type or a number)");
            }
        }

        /**
         * Whether a device has this filter's backend and type (the number is not considered).
         *
         * @param device a device
         * @return true if the type matches or is absent
         */
        public boolean matchesKind(SyclDevice device) {
            return type == null || device.type() == type;
        }

        /**
         * The device this filter selects.
         *
         * @param devices every device, in enumeration order
         * @return the {@code number}-th device matching backend and type, if any
         */
        public Optional<SyclDevice> select(List<SyclDevice> devices) {
            int wanted = Math.max(number, 0);
            int seen = 0;
            for (SyclDevice d : devices) {
                if (matchesKind(d) && seen++ == wanted) {
                    return Optional.of(d);
                }
            }
            return Optional.empty();
        }

        @Override
        public String toString() {
            List<String> parts = new ArrayList<>();
            if (backend != null) {
                parts.add(backend);
            }
            if (type != null) {
                parts.add(type.selectorName());
            }
            if (number >= 0) {
                parts.add(Integer.toString(number));
            }
            return String.join(":", parts);
        }
    }

    private static final SyclSelector DEFAULT = new SyclSelector(List.of());

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code filters} or one of them is null
     */
    public SyclSelector {
        filters = List.copyOf(filters);
    }

    /**
     * The default selector.
     *
     * @return the selector with no filter
     */
    public static SyclSelector defaultSelector() {
        return DEFAULT;
    }

    /**
     * Parses a filter selector string.
     *
     * @param text for example {@code opencl:gpu:0} or {@code gpu,cpu}; {@code default} is the default
     *             selector
     * @return the selector
     * @throws NullPointerException     if {@code text} is null
     * @throws IllegalArgumentException if the text is not a filter selector datamem can use, with
     *                                  the part at fault and what was expected
     */
    public static SyclSelector parse(String text) {
        Objects.requireNonNull(text, "text");
        String s = text.strip();
        if (s.equals("default")) {
            return DEFAULT;
        }
        if (s.isEmpty()) {
            throw new IllegalArgumentException("filter selector: '' (expected: BACKEND:TYPE:NUMBER with at least one"
                    + " part, such as opencl:gpu:0, or default)");
        }
        List<Filter> filters = new ArrayList<>();
        for (String f : s.split(",", -1)) {
            filters.add(parseFilter(text, f.strip()));
        }
        return new SyclSelector(filters);
    }

    private static Filter parseFilter(String text, String filter) {
        if (filter.isEmpty()) {
            throw bad(text, "an empty filter", "filters separated by ',' such as opencl:gpu,opencl:cpu");
        }
        String[] parts = filter.split(":", -1);
        if (parts.length > 3) {
            throw bad(text, "filter '" + filter + "' has " + parts.length + " parts",
                    "at most three: BACKEND:TYPE:NUMBER");
        }
        String backend = null;
        SyclDevice.Type type = null;
        int number = -1;
        int stage = 0; // 0: backend allowed, 1: type allowed, 2: number allowed, 3: nothing more
        for (String part : parts) {
            if (part.isEmpty()) {
                throw bad(text, "filter '" + filter + "' has an empty part", "BACKEND:TYPE:NUMBER without empty parts");
            }
            if (part.equals(OPENCL) || OTHER_BACKENDS.contains(part)) {
                if (stage > 0) {
                    throw bad(text, "backend '" + part + "' after another part", "the backend first");
                }
                if (!part.equals(OPENCL)) {
                    throw bad(text, "backend '" + part + "'", "opencl; datamem reaches SYCL devices through OpenCL"
                            + " (an Intel GPU is opencl:gpu through Intel's OpenCL driver)");
                }
                backend = part;
                stage = 1;
            } else if (part.equals("cpu") || part.equals("gpu") || part.equals("accelerator")) {
                if (stage > 1) {
                    throw bad(text, "device type '" + part + "' after the number", "BACKEND:TYPE:NUMBER in this order");
                }
                type = SyclDevice.Type.valueOf(part.toUpperCase(java.util.Locale.ROOT));
                stage = 2;
            } else if (part.chars().allMatch(c -> c >= '0' && c <= '9')) {
                if (stage > 2) {
                    throw bad(text, "a second number '" + part + "'", "one NUMBER, last");
                }
                try {
                    number = Integer.parseInt(part);
                } catch (NumberFormatException e) {
                    throw bad(text, "device number '" + part + "'", "a number below 2^31");
                }
                stage = 3;
            } else {
                throw bad(text, "'" + part + "'", "a backend (opencl), a device type (cpu, gpu, accelerator) or a"
                        + " device number");
            }
        }
        return new Filter(backend, type, number);
    }

    private static IllegalArgumentException bad(String text, String what, String expected) {
        return new IllegalArgumentException("filter selector '" + text + "': " + what + " (expected: " + expected + ")");
    }

    /**
     * Whether this is the default selector.
     *
     * @return true if there is no filter
     */
    public boolean isDefault() {
        return filters.isEmpty();
    }

    /**
     * The device this selector picks.
     *
     * @param devices every device, in enumeration order
     * @return the device, if any matches
     * @throws NullPointerException if {@code devices} is null
     */
    public Optional<SyclDevice> select(List<SyclDevice> devices) {
        Objects.requireNonNull(devices, "devices");
        if (isDefault()) {
            return devices.stream().min(Comparator.comparing((SyclDevice d) -> !d.usm())
                    .thenComparing(d -> rank(d.type()))
                    .thenComparingInt(SyclDevice::ordinal));
        }
        for (Filter f : filters) {
            Optional<SyclDevice> d = f.select(devices);
            if (d.isPresent()) {
                return d;
            }
        }
        return Optional.empty();
    }

    private static int rank(SyclDevice.Type type) {
        return switch (type) {
            case GPU -> 0;
            case ACCELERATOR -> 1;
            case CPU -> 2;
            case CUSTOM -> 3;
        };
    }

    @Override
    public String toString() {
        if (isDefault()) {
            return "default";
        }
        return String.join(",", filters.stream().map(Filter::toString).toList());
    }
}
