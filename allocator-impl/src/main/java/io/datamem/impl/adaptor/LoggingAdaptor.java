package io.datamem.impl.adaptor;

import io.datamem.impl.AllocatorAdaptor;

import java.io.Closeable;
import java.io.Flushable;
import java.io.UncheckedIOException;

/**
 * Writes every operation through an upstream allocator to a log, one line each, in the format
 * below; {@code datamem replay LOG --handler NAME} replays such a log against any handler.
 *
 * <p>The format, version 1. The first line names the version, {@code # datamem allocation log 1}.
 * Lines starting with {@code #} are comments: {@code # started INSTANT} follows the first, and
 * {@code # thread ID NAME} names a thread the first time it appears. Every other line is one
 * operation, whitespace-separated fields, {@code NANOS} the nanoseconds since the log started,
 * {@code THREAD} the thread's id, sizes in bytes, addresses in hexadecimal with {@code 0x}
 * ({@code 0x0} for {@code NULL}):
 * <ul>
 *   <li>{@code NANOS THREAD malloc SIZE RESULT}</li>
 *   <li>{@code NANOS THREAD calloc COUNT ELEMENT_SIZE RESULT}</li>
 *   <li>{@code NANOS THREAD realloc PTR OLD_SIZE NEW_SIZE RESULT}</li>
 *   <li>{@code NANOS THREAD free PTR SIZE} (frees of {@code NULL} are not logged)</li>
 * </ul>
 * {@code RESULT} is the address returned, {@code 0x0} when the request failed. For example:
 * <pre>
 * # datamem allocation log 1
 * # started 2025-06-01T10:00:00Z
 * # thread 1 main
 * 1200 1 malloc 4096 0x7f3a2c001000
 * 1850 1 calloc 100 8 0x7f3a2c002000
 * 2300 1 realloc 0x7f3a2c001000 4096 8192 0x7f3a2c004000
 * 2950 1 free 0x7f3a2c002000 800
 * </pre>
 *
 * <p>Lines are in an order a single thread can replay: a {@code free} or {@code realloc} is written
 * while the log is locked across the upstream call, so an address freed by one thread and reused by
 * another appears freed before it is allocated again. Writing is buffered; {@link #flush()} and
 * {@link #close()} write it out, and logs opened on a file are flushed at JVM exit. An I/O error
 * stops the logging (never the allocation) and is rethrown by {@code flush} and {@code close}.
 * After {@code close}, operations are still forwarded but no longer logged. Thread-safe; every
 * operation takes a lock, so this adaptor is for recording, not for speed.
 *
 * <p>Built by the handler term {@code log=FILE} (for example
 * {@code AllocatorStack.on(upstream).with("log=/tmp/datamem.log")}) and found with
 * {@code AllocatorStack.find(handler, LoggingAdaptor.class)}.
 */
public interface LoggingAdaptor extends AllocatorAdaptor, Closeable, Flushable {

    /**
     * The operation lines written so far.
     *
     * @return count
     */
    long lines();

    /**
     * Writes buffered lines out.
     *
     * @throws UncheckedIOException if writing failed, now or before
     */
    void flush();

    /**
     * Flushes and closes the log. Later operations are forwarded but not logged. Idempotent.
     *
     * @throws UncheckedIOException if writing failed, now or before
     */
    void close();
}
