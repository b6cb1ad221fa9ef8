/** A datamem user's program. */
module com.example.consumer {
    requires io.datamem.impl;
    // Micrometer is an automatic module, which jlink cannot link: required statically, so the
    // program resolves and links without it; `metrics` (on the class path) uses it.
    requires static micrometer.core;
}
