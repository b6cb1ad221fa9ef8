package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.impl.ForwardingAllocator;
import io.datamem.impl.adaptor.LoggingAdaptor;

import io.datamem.spi.BlockReleased;

import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.Flushable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.foreign.MemorySegment;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@link LoggingAdaptor} of the handler term {@code log=FILE}. The behaviour is stated on the interface.
 */
public final class LoggingAdaptorImpl extends ForwardingAllocator implements LoggingAdaptor {

    /**
     * The version of the line format, written in the first line of every log; stated in
     * {@link LoggingAdaptor}'s javadoc, and checked by the {@code datamem} command line's reader.
     */
    private static final int FORMAT_VERSION = 1;

    // the logger keeps the exported type's name, the one users configure
    private static final System.Logger LOG = System.getLogger(LoggingAdaptor.class.getName());
    private static final List<WeakReference<LoggingAdaptorImpl>> OPEN_FILES = new ArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(LoggingAdaptorImpl::flushAllAtExit, "datamem-log-flush"));
    }

    private final Writer out;
    private final String target;
    private final long start = System.nanoTime();
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentHashMap<Long, Boolean> threadsSeen = new ConcurrentHashMap<>();
    private final StringBuilder line = new StringBuilder(96); // guarded by lock
    private long lines;                                          // guarded by lock
    private IOException error;                                   // guarded by lock
    private boolean closed;                                      // guarded by lock

    private LoggingAdaptorImpl(DataMemAllocator upstream, Writer out, String target) {
        super(upstream);
        this.out = out;
        this.target = target;
        write("# datamem allocation log " + FORMAT_VERSION + "\n# started " + Instant.now() + "\n");
    }

    /**
     * Logs to a file, created or truncated.
     *
     * @param upstream the allocator to log
     * @param file     the log file
     * @return the adaptor
     * @throws NullPointerException if an argument is null
     * @throws UncheckedIOException if the file cannot be opened
     */
    public static LoggingAdaptorImpl open(DataMemAllocator upstream, Path file) {
        Objects.requireNonNull(upstream, "upstream");
        Objects.requireNonNull(file, "file");
        BufferedWriter w;
        try {
            w = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open allocation log " + file + ": " + e.getMessage(), e);
        }
        LoggingAdaptorImpl a = new LoggingAdaptorImpl(upstream, w, file.toString());
        synchronized (OPEN_FILES) {
            OPEN_FILES.removeIf(r -> r.get() == null);
            OPEN_FILES.add(new WeakReference<>(a));
        }
        return a;
    }

    /**
     * Logs to a writer (buffered by the adaptor's caller if needed).
     *
     * @param upstream the allocator to log
     * @param out      where the lines go; closed by {@link #close()}
     * @return the adaptor
     * @throws NullPointerException if an argument is null
     */
    public static LoggingAdaptorImpl to(DataMemAllocator upstream, Writer out) {
        return new LoggingAdaptorImpl(upstream, Objects.requireNonNull(out, "out"), out.getClass().getSimpleName());
    }

    private static void flushAllAtExit() {
        List<WeakReference<LoggingAdaptorImpl>> all;
        synchronized (OPEN_FILES) {
            all = new ArrayList<>(OPEN_FILES);
        }
        for (WeakReference<LoggingAdaptorImpl> r : all) {
            LoggingAdaptorImpl a = r.get();
            if (a != null) {
                try {
                    a.flush();
                } catch (UncheckedIOException e) {
                    // exiting: nothing more to do
                }
            }
        }
    }

    @Override
    public long lines() {
        lock.lock();
        try {
            return lines;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The allocator

    @Override
    public MemorySegment malloc(long byteSize) {
        MemorySegment p = upstream().malloc(byteSize);
        log("malloc", byteSize, -1, -1, p.address(), 1);
        return p;
    }

    @Override
    public MemorySegment calloc(long count, long elementByteSize) {
        MemorySegment p = upstream().calloc(count, elementByteSize);
        log("calloc", count, elementByteSize, -1, p.address(), 2);
        return p;
    }

    @Override
    public MemorySegment realloc(MemorySegment ptr, long oldByteSize, long newByteSize) {
        lock.lock();
        try {
            MemorySegment p;
            try {
                p = upstream().realloc(ptr, oldByteSize, newByteSize);
            } catch (RuntimeException e) {
                if (ptr.address() != 0 && BlockReleased.by(e)) {
                    logLocked("free", ptr.address(), oldByteSize, -1, -1, 3);   // the guard freed it
                }
                throw e;
            }
            logLocked("realloc", ptr.address(), oldByteSize, newByteSize, p.address(), 4);
            return p;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void free(MemorySegment ptr, long byteSize) {
        lock.lock();
        try {
            try {
                upstream().free(ptr, byteSize);
            } catch (RuntimeException e) {
                if (ptr.address() != 0 && BlockReleased.by(e)) {
                    logLocked("free", ptr.address(), byteSize, -1, -1, 3);   // the guard freed it
                }
                throw e;
            }
            if (ptr.address() != 0) {
                logLocked("free", ptr.address(), byteSize, -1, -1, 3);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Logs one operation. {@code shape}: 1 malloc (size, result), 2 calloc (count, size, result),
     * 3 free (ptr, size), 4 realloc (ptr, old, new, result).
     */
    private void log(String op, long a, long b, long c, long result, int shape) {
        lock.lock();
        try {
            logLocked(op, a, b, c, result, shape);
        } finally {
            lock.unlock();
        }
    }

    private void logLocked(String op, long a, long b, long c, long result, int shape) {
        if (closed || error != null) {
            return;
        }
        Thread t = Thread.currentThread();
        long id = t.threadId();
        StringBuilder l = line;
        l.setLength(0);
        if (threadsSeen.putIfAbsent(id, Boolean.TRUE) == null) {
            l.append("# thread ").append(id).append(' ').append(t.getName().replace('\n', ' ')).append('\n');
        }
        l.append(System.nanoTime() - start).append(' ').append(id).append(' ').append(op).append(' ');
        switch (shape) {
            case 1 -> l.append(a).append(' ').append(hex(result));
            case 2 -> l.append(a).append(' ').append(b).append(' ').append(hex(result));
            case 3 -> l.append(hex(a)).append(' ').append(b);
            default -> l.append(hex(a)).append(' ').append(b).append(' ').append(c).append(' ').append(hex(result));
        }
        l.append('\n');
        lines++;
        writeLocked(l);
    }

    private static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }

    private void write(CharSequence text) {
        lock.lock();
        try {
            writeLocked(text);
        } finally {
            lock.unlock();
        }
    }

    private void writeLocked(CharSequence text) {
        try {
            out.append(text);
        } catch (IOException e) {
            error = e;
            LOG.log(System.Logger.Level.ERROR, "datamem: allocation log " + target
                    + " stopped after an I/O error; allocations go on unlogged", e);
        }
    }

    @Override
    public void flush() {
        lock.lock();
        try {
            if (error == null && !closed) {
                try {
                    out.flush();
                } catch (IOException e) {
                    error = e;
                }
            }
            if (error != null) {
                throw new UncheckedIOException("allocation log " + target + ": " + error.getMessage(), error);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            try {
                out.close();
            } catch (IOException e) {
                if (error == null) {
                    error = e;
                }
            }
            closed = true;
            if (error != null) {
                throw new UncheckedIOException("allocation log " + target + ": " + error.getMessage(), error);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "LoggingAdaptor[" + upstream() + " -> " + target + "]";
    }
}
