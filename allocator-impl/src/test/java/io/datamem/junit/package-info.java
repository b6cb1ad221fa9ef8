/**
 * A JUnit 5 extension that runs tests under a tracked and guarded datamem handler and fails them on
 * leaks and memory misuse: {@link io.datamem.junit.CheckedMemory}. Shipped in {@code allocator-impl}'s
 * test jar (automatic module {@code io.datamem.junit}).
 */
package io.datamem.junit;
