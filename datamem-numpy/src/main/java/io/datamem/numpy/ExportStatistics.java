package io.datamem.numpy;

/**
 * What C did with an exported handler, at one moment.
 *
 * @param liveBlocks        blocks C holds: allocated through the struct and not freed yet
 * @param liveBytes         the bytes of those blocks, as recorded when they were allocated
 * @param allocations       successful {@code malloc} and {@code calloc} calls, and {@code realloc}
 *                          calls with a {@code NULL} pointer
 * @param reallocations     successful {@code realloc} calls of live blocks
 * @param frees             {@code free} calls of live blocks (each freed with its recorded size)
 * @param failedAllocations allocations that returned {@code NULL} while the export was open: the
 *                          handler returned {@code NULL}, or the size overflowed or exceeded
 *                          {@link io.datamem.DataMemAllocator#MAX_BYTE_SIZE}
 * @param refusedAfterClose allocations refused ({@code NULL}) because the export was closed
 * @param sizeMismatches    frees of live blocks whose {@code size} argument differed from the size
 *                          recorded (the recorded size was used)
 * @param foreignFrees      frees of pointers this export did not hand out, ignored
 * @param doubleFrees       frees of pointers freed already (among the last 1024 freed), ignored
 * @param foreignReallocs   reallocs of pointers that are not live blocks, refused with {@code NULL}
 * @param upcallErrors      exceptions thrown by the handler inside a function (caught there; the
 *                          function returned {@code NULL}), and non-native segments it returned
 */
public record ExportStatistics(long liveBlocks, long liveBytes, long allocations, long reallocations, long frees,
        long failedAllocations, long refusedAfterClose, long sizeMismatches, long foreignFrees, long doubleFrees,
        long foreignReallocs, long upcallErrors) {
}
