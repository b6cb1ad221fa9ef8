package io.datamem.impl.snapshot;

/**
 * The management interface of {@link MemorySnapshots}, registered on the platform MBean server as
 * {@value MemorySnapshots#OBJECT_NAME}: the handlers a running JVM can describe, and their memory
 * snapshots as the JSON {@link MemorySnapshot#toJson()} writes (schema
 * {@value MemorySnapshot#SCHEMA}, version {@value MemorySnapshot#VERSION}). {@code datamem snapshot
 * --pid PID} reads it through the Attach API; any JMX client (JConsole, {@code jmxterm}) can too.
 */
public interface MemorySnapshotsMXBean {

    /**
     * The names of the handlers a snapshot can describe now ({@link MemorySnapshots#live()}), each
     * once, in the order they were built.
     *
     * @return the names
     */
    String[] getHandlerNames();

    /**
     * A snapshot of every live handler with a name, as JSON: usually one; more if the JVM built
     * several handlers of that name ({@code DataMem.createHandler} twice).
     *
     * @param handlerName the name, one of {@link #getHandlerNames()}
     * @return the JSON document
     * @throws IllegalArgumentException if no live handler has that name; the message lists those
     *                                  that do
     * @throws NullPointerException     if {@code handlerName} is null
     */
    String snapshot(String handlerName);

    /**
     * A snapshot of every live handler, as JSON.
     *
     * @return the JSON document, one entry per handler
     */
    String snapshotAll();
}
