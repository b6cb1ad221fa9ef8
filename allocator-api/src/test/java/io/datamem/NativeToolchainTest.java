package io.datamem;

import io.datamem.testing.NativeToolchain;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A missing native tool skips locally and fails under CI, saying which package to install. */
class NativeToolchainTest {

    @Test
    void missingToolsSkipLocallyAndFailUnderCi() {
        Class<? extends Throwable> expected = NativeToolchain.ci() ? AssertionFailedError.class
                : TestAbortedException.class;
        Throwable t = assertThrows(expected, () -> NativeToolchain.require(false, "the thing", "thing-dev"));
        assertTrue(t.getMessage().contains("apt-get install -y thing-dev"), t.getMessage());
        NativeToolchain.require(true, "present", "unused");
    }
}
