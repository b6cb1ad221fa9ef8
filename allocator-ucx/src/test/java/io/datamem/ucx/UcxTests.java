package io.datamem.ucx;

import io.datamem.testing.NativeToolchain;

/** What the UCX tests need. */
final class UcxTests {

    private UcxTests() {
    }

    /** Skips (locally) or fails (under CI, which installs libucx0) when UCX cannot be loaded. */
    static void assumeUcx() {
        String why = UcxContext.unavailableReason();
        NativeToolchain.require(why == null, "UCX (" + why + ")", "libucx0");
    }
}
