package io.datamem.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * Races for tests: a body run by several threads at once, round after round, each round between
 * two barriers, so that every thread's body of a round starts together.
 */
public final class Rounds {

    private Rounds() {
    }

    /** What one thread does in one round. */
    @FunctionalInterface
    public interface Body {
        /**
         * Runs one thread's part of a round.
         *
         * @param thread the thread's index, from 0
         * @throws Throwable anything: it is recorded as a failure and ends the race
         */
        void run(int thread) throws Throwable;
    }

    /**
     * Runs {@code body} on {@code threads} threads for {@code rounds} rounds. {@code before} runs
     * once before each round (the start barrier's action) and {@code after} once after it (the end
     * barrier's action); either may be null. A failure of a body or an action is recorded and breaks
     * both barriers, which ends every thread.
     *
     * @param threads the threads
     * @param rounds  the rounds
     * @param before  what prepares each round, or null
     * @param after   what checks each round, or null
     * @param body    each thread's part of a round
     * @return the failures, empty if there was none
     * @throws InterruptedException if interrupted while waiting for the threads to end
     */
    public static List<Throwable> run(int threads, int rounds, Runnable before, Runnable after, Body body)
            throws InterruptedException {
        CyclicBarrier start = new CyclicBarrier(threads, before);
        CyclicBarrier end = new CyclicBarrier(threads, after);
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread thread = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        start.await();
                        body.run(index);
                        end.await();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                    start.reset();
                    end.reset();
                }
            });
            all.add(thread);
            thread.start();
        }
        for (Thread thread : all) {
            thread.join();
        }
        return failures;
    }
}
