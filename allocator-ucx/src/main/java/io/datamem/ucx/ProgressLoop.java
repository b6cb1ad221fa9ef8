package io.datamem.ucx;

import io.datamem.ucx.internal.Ucp;

/** A context's progress thread ({@link UcxContext.Options#progressThread()}). */
final class ProgressLoop implements Runnable {

    private final UcxContext context;

    ProgressLoop(UcxContext context) {
        this.context = context;
    }

    /**
     * Drives the worker while no caller does: polls it while events come and for
     * {@link UcxContext.Options#progressSpin()} after the last, then sleeps, backing off to 200 µs; it leaves
     * the worker alone while a caller holds or wants it.
     */
    @Override
    public void run() {
        long spinNanos = context.options().progressSpin().toNanos();
        long lastEvent = System.nanoTime();
        long idleNanos = 0;
        while (!context.isClosed()) {
            int events = 0;
            boolean driven = !context.workerLock().tryLockForProgress();
            if (!driven) {
                try {
                    if (context.isClosed()) {
                        return;
                    }
                    events = Ucp.workerProgress(context.worker());
                } finally {
                    context.workerLock().unlockForProgress();
                }
            }
            if (!driven && events > 0) {
                lastEvent = System.nanoTime();
                idleNanos = 0;
            } else if (!driven && System.nanoTime() - lastEvent < spinNanos) {
                Thread.onSpinWait();   // a burst of transfers keeps going at polling latency
            } else {
                // idle, or a caller drives the worker until its operation completes (spinning
                // beside it would only take its core)
                idleNanos = Math.min(200_000, idleNanos * 2 + 1_000);
                java.util.concurrent.locks.LockSupport.parkNanos(idleNanos);
            }
        }
    }
}
