package io.datamem.impl.snapshot;

import io.datamem.DataMem;
import io.datamem.DataMemHandler;
import io.datamem.internal.LiveHandlers;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Memory snapshots of the handlers of this JVM, taken on request from outside it: the MBean
 * {@value #OBJECT_NAME} on the platform MBean server ({@link MemorySnapshotsMXBean}).
 *
 * <h2>Which handlers</h2>
 * {@link #live()}: the very instances the program allocates through, never fresh ones built from
 * a name. They are the handlers built by name ({@code DataMem.handler}, {@code DataMem.createHandler},
 * the default named by {@code -Ddatamem.handler}), by {@code AllocatorStack...handler(name)}, or set
 * with {@code DataMem.setDefaultHandler}, while something still reaches them (an array that captured
 * one keeps it reachable; datamem holds them weakly), and the process default. A handler made
 * directly with {@code new DataMemHandler(...)} or {@code DataMemHandler.of} and only bound in a
 * scope ({@code DataMem.callWith}) is not seen.
 *
 * <h2>Registration</h2>
 * Automatic: the first time a JVM builds a handler (through allocator-api's registry or
 * {@code AllocatorStack}), the MBean is registered, so an unmodified program can be snapshotted
 * with {@code datamem snapshot --pid PID}. {@code -D}{@value #JMX_PROPERTY}{@code =false} turns
 * that off; {@link #register()} does it by hand and says whether it is registered. No agent is
 * loaded: a client attaches, starts the JDK's local management agent and calls the MBean.
 */
public final class MemorySnapshots {

    /** The MBean's object name. */
    public static final String OBJECT_NAME = "io.datamem:type=MemorySnapshots";

    /** The system property that, set to {@code false}, keeps the MBean from being registered. */
    public static final String JMX_PROPERTY = "datamem.jmx";

    private static final Object LOCK = new Object();
    private static boolean registered;

    private MemorySnapshots() {
    }

    /**
     * Registers the MBean on the platform MBean server, unless it is registered already or
     * {@code -D}{@value #JMX_PROPERTY}{@code =false} is set.
     *
     * @return true if this class's MBean is registered (now or before); false if the property turns
     *         it off, or if another copy of datamem (another class loader) registered the name first
     * @throws IllegalStateException if the platform MBean server refuses it (a security manager's
     *                               policy, a server that fails); the message says why
     */
    public static boolean register() {
        if (!enabled()) {
            return false;
        }
        synchronized (LOCK) {
            if (registered) {
                return true;
            }
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            try {
                server.registerMBean(new Bean(), objectName());
                registered = true;
                return true;
            } catch (InstanceAlreadyExistsException e) {
                return false;
            } catch (JMException e) {
                throw new IllegalStateException("cannot register " + OBJECT_NAME + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * Whether {@code -D}{@value #JMX_PROPERTY} lets the MBean be registered: unless it is
     * {@code false}.
     *
     * @return false if the property is {@code false} (in any case), true otherwise
     */
    public static boolean enabled() {
        return enabled(System.getProperty(JMX_PROPERTY));
    }

    /**
     * Whether a value of {@value #JMX_PROPERTY} lets the MBean be registered.
     *
     * @param value the property's value, or null when unset
     * @return false for {@code false} (in any case), true otherwise
     */
    static boolean enabled(String value) {
        return value == null || !value.strip().equalsIgnoreCase("false");
    }

    private static ObjectName objectName() {
        try {
            return new ObjectName(OBJECT_NAME);
        } catch (MalformedObjectNameException e) {
            throw new AssertionError(e);   // a constant
        }
    }

    /**
     * The handlers a live snapshot describes: every handler built and still reachable, in the order
     * built, then the process default if it is not among them. Each instance once.
     *
     * @return a new list
     */
    public static List<DataMemHandler> live() {
        Set<DataMemHandler> all = Collections.newSetFromMap(new IdentityHashMap<>());
        List<DataMemHandler> ordered = new ArrayList<>();
        for (DataMemHandler h : LiveHandlers.live(DataMemHandler.class)) {
            if (all.add(h)) {
                ordered.add(h);
            }
        }
        DataMemHandler processDefault;
        try {
            processDefault = DataMem.defaultHandler();
        } catch (IllegalStateException e) {
            processDefault = null;   // a configured default that cannot be made: nothing to describe
        }
        if (processDefault != null && all.add(processDefault)) {
            ordered.add(processDefault);
        }
        return ordered;
    }

    /**
     * Takes a snapshot of the live handlers with a name.
     *
     * @param handlerName the name
     * @return the snapshot, with one entry per live handler of that name
     * @throws NullPointerException     if {@code handlerName} is null
     * @throws IllegalArgumentException if no live handler has that name; the message lists the
     *                                  names that do
     */
    public static MemorySnapshot take(String handlerName) {
        Objects.requireNonNull(handlerName, "handlerName");
        List<DataMemHandler> live = live();
        List<DataMemHandler> named = live.stream().filter(h -> h.name().equals(handlerName)).toList();
        if (named.isEmpty()) {
            throw new IllegalArgumentException("handler: '" + handlerName + "' (expected: a handler live in process "
                    + ProcessHandle.current().pid() + ", one of " + names(live) + ")");
        }
        return MemorySnapshot.take(named);
    }

    private static List<String> names(List<DataMemHandler> handlers) {
        Set<String> names = new LinkedHashSet<>();
        handlers.forEach(h -> names.add(h.name()));
        return List.copyOf(names);
    }

    /** The MBean: each call reads the live handlers anew. */
    private static final class Bean implements MemorySnapshotsMXBean {

        @Override
        public String[] getHandlerNames() {
            return names(live()).toArray(String[]::new);
        }

        @Override
        public String snapshot(String handlerName) {
            return take(handlerName).toJson();
        }

        @Override
        public String snapshotAll() {
            return MemorySnapshot.take(live()).toJson();
        }
    }
}
