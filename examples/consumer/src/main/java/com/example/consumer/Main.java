package com.example.consumer;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.array.DType;
import io.datamem.array.NDArray;

/** Computes with datamem's arrays under a scoped handler and prints what it saw. */
public final class Main {

    private Main() {
    }

    /**
     * Runs the program.
     *
     * @param args what to do after the computation: {@code metrics} prints the handler's meters
     *             through Micrometer (which must be on the class path or module path); any other
     *             word is a handler name to try to make, printed with the outcome
     */
    public static void main(String[] args) {
        DataMemHandler aligned = DataMem.handler("aligned64+stats");
        double sum = DataMem.callWith(aligned, () -> {
            try (NDArray x = NDArray.zeros(DType.FLOAT64, 100, 10)) {
                for (int i = 0; i < 100; i++) {
                    x.setDouble(i, i, 0);
                }
                if (!x.handler().name().equals("aligned64+stats") || x.segment().address() % 64 != 0) {
                    throw new AssertionError("array not allocated through aligned64+stats: " + x.handler());
                }
                double s = 0;
                for (int i = 0; i < 100; i++) {
                    s += x.getDouble(i, 0);
                }
                return s;
            }
        });
        System.out.println("consumer: sum " + sum + " through " + aligned.name());
        for (String name : args) {
            if (name.equals("metrics")) {
                Meters.print(aligned);
                continue;
            }
            try {
                System.out.println("consumer: " + name + " -> " + DataMem.handler(name).name());
            } catch (RuntimeException e) {
                System.out.println("consumer: " + name + " -> " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
