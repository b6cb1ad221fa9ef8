package io.datamem.ucx;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that serialises worker calls. A caller that wants it spins briefly before it blocks
 * (the progress thread holds it for one {@code ucp_worker_progress}, a few µs, and a parked
 * caller would wait tens of µs more to be woken), and the progress thread leaves the worker to
 * callers: it takes the lock only while none holds or wants it.
 */
final class WorkerLock extends ReentrantLock {
    private static final long SPIN_NANOS = 20_000;
    private final java.util.concurrent.atomic.AtomicInteger callers =
            new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void lock() {
        callers.incrementAndGet();
        long until = System.nanoTime() + SPIN_NANOS;
        while (!tryLock()) {
            if (System.nanoTime() - until > 0) {
                super.lock();
                return;
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public void unlock() {
        super.unlock();
        callers.decrementAndGet();
    }

    boolean tryLockForProgress() {
        return callers.get() == 0 && tryLock();
    }

    void unlockForProgress() {
        super.unlock();
    }
}
