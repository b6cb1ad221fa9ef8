package io.datamem.examples.cli;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import io.datamem.impl.snapshot.MemorySnapshots;

import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.RuntimeMBeanException;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * A connection to the memory-snapshot MBean ({@value MemorySnapshots#OBJECT_NAME}) of another JVM,
 * made through the Attach API: attach, start the JDK's local management agent, connect to it over
 * JMX, detach. Nothing is loaded into the target (no agent); it needs datamem's allocator-impl to
 * have built a handler, which registers the MBean, and no {@code -Ddatamem.jmx=false}.
 */
final class LiveSnapshot implements AutoCloseable {

    /** How long {@link #connect} waits for a JVM's MBean to be registered. */
    static final long MBEAN_WAIT_MILLIS = 3000;

    private final long pid;
    private final JMXConnector connector;
    private final MBeanServerConnection server;
    private final ObjectName name;

    private LiveSnapshot(long pid, JMXConnector connector, MBeanServerConnection server, ObjectName name) {
        this.pid = pid;
        this.connector = connector;
        this.server = server;
        this.name = name;
    }

    /**
     * Connects to the MBean of a process.
     *
     * @param pid the process
     * @return the connection; close it
     * @throws IllegalStateException if no process has that pid, it is this process, it cannot be
     *                               attached to (not a JVM, another user's, attach disabled), its
     *                               management agent cannot be started or reached, or it has no
     *                               datamem MBean; the message says which and what to do
     */
    static LiveSnapshot connect(long pid) {
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            throw new IllegalStateException("--pid " + pid + ": no such process (expected: the pid of a running JVM,"
                    + " as jps lists them)");
        }
        if (pid == ProcessHandle.current().pid()) {
            throw new IllegalStateException("--pid " + pid + ": that is this command's own process (expected: another"
                    + " JVM)");
        }
        String what = "--pid " + pid + describe(process.get());
        String address;
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        } catch (AttachNotSupportedException e) {
            throw new IllegalStateException("cannot attach to " + what + ": " + e.getMessage() + " (expected: a JVM run"
                    + " by the same user, without -XX:+DisableAttachMechanism)", e);
        } catch (IOException e) {
            throw new IllegalStateException("cannot attach to " + what + " or start its management agent: " + e
                    + " (expected: a JVM run by the same user, without -XX:+DisableAttachMechanism)", e);
        }
        JMXConnector connector = null;
        try {
            connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
            MBeanServerConnection server = connector.getMBeanServerConnection();
            ObjectName name = new ObjectName(MemorySnapshots.OBJECT_NAME);
            if (!registered(server, name)) {
                throw new IllegalStateException(what + " has no datamem MBean " + MemorySnapshots.OBJECT_NAME
                        + " (waited " + MBEAN_WAIT_MILLIS + " ms): it has not built a datamem handler yet, does not use"
                        + " allocator-impl, or runs with -D"
                        + MemorySnapshots.JMX_PROPERTY + "=false");
            }
            LiveSnapshot live = new LiveSnapshot(pid, connector, server, name);
            connector = null;
            return live;
        } catch (IOException | JMException e) {
            throw new IllegalStateException("cannot reach the management agent of " + what + " at " + address + ": "
                    + e, e);
        } finally {
            closeQuietly(connector);
        }
    }

    /**
     * Whether the MBean is registered, waiting up to {@value #MBEAN_WAIT_MILLIS} ms for it: a JVM
     * registers it on a thread of its own just after it builds its first handler.
     */
    private static boolean registered(MBeanServerConnection server, ObjectName name) throws IOException {
        long deadline = System.nanoTime() + MBEAN_WAIT_MILLIS * 1_000_000L;
        while (!server.isRegistered(name)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private static String describe(ProcessHandle process) {
        return process.info().command().map(c -> " (" + c + ")").orElse("");
    }

    /**
     * The names of the handlers the process can describe.
     *
     * @return the names
     * @throws IllegalStateException if the call fails
     */
    List<String> handlerNames() {
        try {
            return List.of((String[]) server.getAttribute(name, "HandlerNames"));
        } catch (IOException | JMException | RuntimeException e) {
            throw failed("HandlerNames", e);
        }
    }

    /**
     * A snapshot's JSON: of the handlers with a name, or of every handler.
     *
     * @param handlerName a name {@link #handlerNames()} lists, or null for every handler
     * @return the JSON
     * @throws IllegalArgumentException if no handler has that name any more (the target's message)
     * @throws IllegalStateException    if the call fails
     */
    String snapshotJson(String handlerName) {
        try {
            return handlerName == null ? (String) server.invoke(name, "snapshotAll", null, null)
                    : (String) server.invoke(name, "snapshot", new Object[] {handlerName},
                    new String[] {String.class.getName()});
        } catch (RuntimeMBeanException e) {
            if (e.getTargetException() instanceof IllegalArgumentException iae) {
                throw new IllegalArgumentException(iae.getMessage(), iae);
            }
            throw failed("snapshot", e);
        } catch (IOException | JMException | RuntimeException e) {
            throw failed("snapshot", e);
        }
    }

    private IllegalStateException failed(String operation, Exception e) {
        return new IllegalStateException("the datamem MBean of process " + pid + " failed to answer " + operation
                + ": " + e, e);
    }

    /** Closes the JMX connection. */
    @Override
    public void close() {
        closeQuietly(connector);
    }

    private static void closeQuietly(JMXConnector c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException ignored) {
                // the connection is gone either way
            }
        }
    }
}
