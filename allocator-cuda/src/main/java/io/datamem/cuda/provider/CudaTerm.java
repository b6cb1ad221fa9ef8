package io.datamem.cuda.provider;

import io.datamem.cuda.CudaManagedAllocator;
import io.datamem.spi.ProviderTerm;

import java.util.Locale;
import java.util.Objects;

/**
 * A parsed {@code cuda:...} handler-name term:
 * {@code cuda:KIND[=ORDINAL][,OPTION...][(UPSTREAM)]}. Pure parsing, tested without a GPU.
 * Internal.
 *
 * <table>
 *   <caption>Kinds and their options</caption>
 *   <tr><th>kind</th><th>options</th><th>upstream</th></tr>
 *   <tr><td>{@code pinned}</td><td>{@code portable}, {@code mapped}, {@code writecombined}</td><td>no</td></tr>
 *   <tr><td>{@code device}</td><td>none</td><td>no</td></tr>
 *   <tr><td>{@code managed}</td><td>{@code attach=global|host}</td><td>no</td></tr>
 *   <tr><td>{@code registered}</td><td>{@code portable}, {@code mapped}, {@code readonly}</td>
 *       <td>any page-aligned host handler name; default {@code aligned:PAGESIZE}</td></tr>
 * </table>
 *
 * @param kind          the memory kind
 * @param device        the device ordinal (default 0)
 * @param portable      pinned and registered: the portable flag
 * @param mapped        pinned and registered: the mapped flag
 * @param writeCombined pinned: the write-combined flag
 * @param readOnly      registered: the read-only flag
 * @param attach        managed: the attach mode
 * @param upstream      registered: the upstream handler name, or null for the default
 */
public record CudaTerm(Kind kind, int device, boolean portable, boolean mapped, boolean writeCombined,
                       boolean readOnly, CudaManagedAllocator.Attach attach, String upstream) {

    /** The family of every CUDA term. */
    public static final String FAMILY = "cuda";

    /** The forms, for listings and messages. */
    public static final String EXPECTED = "cuda:pinned[=N][,portable][,mapped][,writecombined],"
            + " cuda:device[=N], cuda:managed[=N][,attach=global|host],"
            + " cuda:registered[=N][,portable][,mapped][,readonly][(UPSTREAM)]";

    /** The kinds of CUDA memory a term names. */
    public enum Kind {
        /** {@code cuMemHostAlloc}. */
        PINNED,
        /** {@code cuMemAlloc}. */
        DEVICE,
        /** {@code cuMemAllocManaged}. */
        MANAGED,
        /** {@code cuMemHostRegister} over an upstream. */
        REGISTERED;

        /**
         * The kind's spelling.
         *
         * @return for example {@code pinned}
         */
        public String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Validates the components.
     *
     * @throws NullPointerException     if {@code kind} or {@code attach} is null
     * @throws IllegalArgumentException if {@code device} is negative
     */
    public CudaTerm {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(attach, "attach");
        if (device < 0) {
            throw new IllegalArgumentException("device: " + device + " (expected: >= 0)");
        }
    }

    /**
     * Parses a term.
     *
     * @param term        a term of the {@code cuda} family
     * @param handlerName the whole handler name, for messages
     * @return the parsed term
     * @throws IllegalArgumentException if the term is malformed; the message names the problem and
     *                                  the accepted forms
     */
    public static CudaTerm parse(ProviderTerm term, String handlerName) {
        String text = term.withoutNested().strip();
        String prefix = FAMILY + ":";
        if (!text.startsWith(prefix) || text.length() == prefix.length()) {
            throw bad(handlerName, term, "expected a kind after 'cuda:'");
        }
        String nested = term.nested();
        String[] items = text.substring(prefix.length()).split(",", -1);
        String head = items[0].strip();
        int eq = head.indexOf('=');
        String kindText = (eq < 0 ? head : head.substring(0, eq)).strip().toLowerCase(Locale.ROOT);
        Kind kind = switch (kindText) {
            case "pinned" -> Kind.PINNED;
            case "device" -> Kind.DEVICE;
            case "managed" -> Kind.MANAGED;
            case "registered" -> Kind.REGISTERED;
            default -> throw bad(handlerName, term, "unknown kind '" + kindText + "'");
        };
        int device = 0;
        if (eq >= 0) {
            String n = head.substring(eq + 1).strip();
            try {
                device = Integer.parseInt(n);
            } catch (NumberFormatException e) {
                throw bad(handlerName, term, "device ordinal '" + n + "' is not a number");
            }
            if (device < 0) {
                throw bad(handlerName, term, "device ordinal " + device + " is negative");
            }
        }
        boolean portable = false;
        boolean mapped = false;
        boolean writeCombined = false;
        boolean readOnly = false;
        CudaManagedAllocator.Attach attach = CudaManagedAllocator.Attach.GLOBAL;
        for (int i = 1; i < items.length; i++) {
            String item = items[i].strip();
            String option = item.toLowerCase(Locale.ROOT);
            if (option.isEmpty()) {
                throw bad(handlerName, term, "empty option");
            }
            boolean hostFlags = kind == Kind.PINNED || kind == Kind.REGISTERED;
            if (hostFlags && option.equals("portable")) {
                portable = true;
            } else if (hostFlags && option.equals("mapped")) {
                mapped = true;
            } else if (kind == Kind.PINNED && (option.equals("writecombined") || option.equals("write-combined")
                    || option.equals("wc"))) {
                writeCombined = true;
            } else if (kind == Kind.REGISTERED && (option.equals("readonly") || option.equals("read-only"))) {
                readOnly = true;
            } else if (kind == Kind.MANAGED && option.startsWith("attach=")) {
                attach = switch (option.substring("attach=".length()).strip()) {
                    case "global" -> CudaManagedAllocator.Attach.GLOBAL;
                    case "host" -> CudaManagedAllocator.Attach.HOST;
                    default -> throw bad(handlerName, term, "'" + item + "' (attach is global or host)");
                };
            } else {
                throw bad(handlerName, term, "unknown option '" + item + "' for cuda:" + kind.spelling()
                        + " (its options: " + optionsOf(kind) + ")");
            }
        }
        if (nested != null && kind != Kind.REGISTERED) {
            throw bad(handlerName, term, "cuda:" + kind.spelling() + " takes no upstream in parentheses (only"
                    + " cuda:registered(UPSTREAM) does; for a pool write pool(cuda:" + kind.spelling() + "))");
        }
        if (nested != null && nested.isEmpty()) {
            throw bad(handlerName, term, "empty parentheses (expected: an upstream handler name inside)");
        }
        return new CudaTerm(kind, device, portable, mapped, writeCombined, readOnly, attach, nested);
    }

    private static String optionsOf(Kind kind) {
        return switch (kind) {
            case PINNED -> "portable, mapped, writecombined";
            case DEVICE -> "none";
            case MANAGED -> "attach=global, attach=host";
            case REGISTERED -> "portable, mapped, readonly";
        };
    }

    private static IllegalArgumentException bad(String handlerName, ProviderTerm term, String what) {
        return term.refused(handlerName, what, EXPECTED);
    }

    /**
     * The canonical spelling of this term.
     *
     * @return for example {@code cuda:pinned=1,portable} or {@code cuda:registered(numa:local)}
     */
    public String canonical() {
        StringBuilder s = new StringBuilder("cuda:").append(kind.spelling()).append('=').append(device);
        if (portable) {
            s.append(",portable");
        }
        if (mapped) {
            s.append(",mapped");
        }
        if (writeCombined) {
            s.append(",writecombined");
        }
        if (readOnly) {
            s.append(",readonly");
        }
        if (attach != CudaManagedAllocator.Attach.GLOBAL) {
            s.append(",attach=").append(attach.optionName());
        }
        if (upstream != null) {
            s.append('(').append(upstream).append(')');
        }
        return s.toString();
    }
}
