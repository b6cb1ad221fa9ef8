package io.datamem.buffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Request flags of the buffer protocol: CPython's {@code PyBUF_*} values, bit for bit, plus the
 * extended buffer protocol draft's {@link #DEVICE} and {@link #REQUIRED_FLAGS}.
 *
 * <p>A consumer ORs the flags describing what it can handle and passes them to
 * {@link BufferExporter#getBuffer(int)}. Composite flags contain their components: {@link #STRIDES}
 * includes {@link #ND}, every contiguity flag includes {@link #STRIDES}. Test a request with
 * {@link #requests(int, int)}, which checks all bits of a composite flag, as CPython's
 * {@code REQ_*} macros do.
 *
 * <p>The draft gives {@code PyBUF_DEVICE} and {@code PyBUF_REQUIRED_FLAGS} no numbers; datamem's
 * are documented on the constants and in {@code docs/interchange.md}.
 */
public final class BufferFlags {

    /** {@code PyBUF_SIMPLE} (0): a contiguous block of unsigned bytes; no format, shape or strides. */
    public static final int SIMPLE = 0;
    /** {@code PyBUF_WRITABLE} (0x0001): the consumer will write; a read-only exporter must refuse. */
    public static final int WRITABLE = 0x0001;
    /** {@code PyBUF_WRITEABLE}: CPython's alias of {@link #WRITABLE}. */
    public static final int WRITEABLE = WRITABLE;
    /** {@code PyBUF_FORMAT} (0x0004): fill in {@code format}; without it format is NULL ({@code "B"}). */
    public static final int FORMAT = 0x0004;
    /** {@code PyBUF_ND} (0x0008): fill in {@code shape}; without it the buffer is one flat run of bytes. */
    public static final int ND = 0x0008;
    /** {@code PyBUF_STRIDES} (0x0018 = 0x0010 | ND): fill in {@code strides}; the consumer handles any layout. */
    public static final int STRIDES = 0x0010 | ND;
    /** {@code PyBUF_C_CONTIGUOUS} (0x0038 = 0x0020 | STRIDES): the data must be C-contiguous. */
    public static final int C_CONTIGUOUS = 0x0020 | STRIDES;
    /** {@code PyBUF_F_CONTIGUOUS} (0x0058 = 0x0040 | STRIDES): the data must be Fortran-contiguous. */
    public static final int F_CONTIGUOUS = 0x0040 | STRIDES;
    /** {@code PyBUF_ANY_CONTIGUOUS} (0x0098 = 0x0080 | STRIDES): the data must be C- or Fortran-contiguous. */
    public static final int ANY_CONTIGUOUS = 0x0080 | STRIDES;
    /** {@code PyBUF_INDIRECT} (0x0118 = 0x0100 | STRIDES): the consumer also handles {@code suboffsets}. */
    public static final int INDIRECT = 0x0100 | STRIDES;

    /** {@code PyBUF_CONTIG} (0x0009 = ND | WRITABLE). */
    public static final int CONTIG = ND | WRITABLE;
    /** {@code PyBUF_CONTIG_RO} (0x0008 = ND). */
    public static final int CONTIG_RO = ND;
    /** {@code PyBUF_STRIDED} (0x0019 = STRIDES | WRITABLE). */
    public static final int STRIDED = STRIDES | WRITABLE;
    /** {@code PyBUF_STRIDED_RO} (0x0018 = STRIDES). */
    public static final int STRIDED_RO = STRIDES;
    /** {@code PyBUF_RECORDS} (0x001d = STRIDES | WRITABLE | FORMAT). */
    public static final int RECORDS = STRIDES | WRITABLE | FORMAT;
    /** {@code PyBUF_RECORDS_RO} (0x001c = STRIDES | FORMAT). */
    public static final int RECORDS_RO = STRIDES | FORMAT;
    /** {@code PyBUF_FULL} (0x011d = INDIRECT | WRITABLE | FORMAT). */
    public static final int FULL = INDIRECT | WRITABLE | FORMAT;
    /** {@code PyBUF_FULL_RO} (0x011c = INDIRECT | FORMAT). */
    public static final int FULL_RO = INDIRECT | FORMAT;

    /**
     * {@code PyBUF_READ} (0x100): not a request flag; CPython's {@code PyMemoryView_FromMemory}
     * access mode. Listed for completeness; it shares its bit with {@link #INDIRECT}.
     */
    public static final int READ = 0x100;
    /** {@code PyBUF_WRITE} (0x200): not a request flag; {@code PyMemoryView_FromMemory}'s writable mode. */
    public static final int WRITE = 0x200;

    /**
     * {@code PyBUF_DEVICE} (0x10000), the extended buffer protocol draft's device flag: the consumer
     * understands the extension fields ({@code flags}, {@code ext_flags}, {@code device},
     * {@code device_info}) and accepts memory the host cannot dereference. It is not a required
     * flag: an exporter may ignore it for host memory, and must refuse device memory requested
     * without it. The draft assigns no number; datamem uses bit 16, leaving bits 0-15 to CPython's
     * classic flags.
     */
    public static final int DEVICE = 0x10000;

    /**
     * Every bit of the classic request flags (0x01fd): {@code WRITABLE}, {@code FORMAT},
     * {@code ND}, {@code STRIDES}, the three contiguity bits and the {@code INDIRECT} bit. What a
     * {@link BufferExporter#supportedFlags()} of 0 stands for.
     */
    public static final int CLASSIC_FLAGS = WRITABLE | FORMAT | ND | STRIDES | C_CONTIGUOUS | F_CONTIGUOUS
            | ANY_CONTIGUOUS | INDIRECT;

    /**
     * {@code PyBUF_REQUIRED_FLAGS} (0x00fd): the flags an exporter must not ignore, which
     * {@link BufferExporter#request(BufferExporter, int)} checks against
     * {@link BufferExporter#supportedFlags()} before asking for a buffer. Every classic bit except
     * {@code INDIRECT}'s own (a soft capability flag, as the draft says) and no extended flag
     * ({@link #DEVICE} is optional by design).
     */
    public static final int REQUIRED_FLAGS = CLASSIC_FLAGS & ~0x0100;

    /** The extended request flags of the draft: today {@link #DEVICE} alone. */
    public static final int EXTENDED_FLAGS = DEVICE;

    private BufferFlags() {
    }

    /**
     * Whether {@code flags} requests {@code flag}: all of {@code flag}'s bits are set, as CPython's
     * {@code REQ_*} macros test composite flags ({@code (flags & PyBUF_STRIDES) == PyBUF_STRIDES}).
     *
     * @param flags the request
     * @param flag  a flag constant
     * @return whether every bit of {@code flag} is in {@code flags}; true for {@link #SIMPLE}
     */
    public static boolean requests(int flags, int flag) {
        return (flags & flag) == flag;
    }

    /**
     * A readable spelling of a flag combination, naming the largest flags first:
     * {@code describe(FULL_RO)} is {@code "INDIRECT|FORMAT"}.
     *
     * @param flags the flags
     * @return the names joined with {@code |}, {@code "SIMPLE"} for 0, unknown bits in hex
     */
    public static String describe(int flags) {
        if (flags == 0) {
            return "SIMPLE";
        }
        List<String> names = new ArrayList<>();
        int rest = flags;
        // Composite flags first, each named by its own bit, so that STRIDES is not also spelled ND.
        int[] order = {INDIRECT, C_CONTIGUOUS, F_CONTIGUOUS, ANY_CONTIGUOUS, STRIDES, ND, FORMAT, WRITABLE, DEVICE};
        String[] orderNames = {"INDIRECT", "C_CONTIGUOUS", "F_CONTIGUOUS", "ANY_CONTIGUOUS", "STRIDES", "ND",
            "FORMAT", "WRITABLE", "DEVICE"};
        for (int i = 0; i < order.length; i++) {
            if ((rest & ownBit(order[i])) != 0) {
                names.add(orderNames[i]);
                rest &= ~order[i];
            }
        }
        if (rest != 0) {
            names.add("0x" + Integer.toHexString(rest));
        }
        return String.join("|", names);
    }

    /** The bit a flag adds to the flags it contains (STRIDES: 0x10; ND: 0x08). */
    private static int ownBit(int flag) {
        return switch (flag) {
            case STRIDES -> 0x0010;
            case C_CONTIGUOUS -> 0x0020;
            case F_CONTIGUOUS -> 0x0040;
            case ANY_CONTIGUOUS -> 0x0080;
            case INDIRECT -> 0x0100;
            default -> flag;
        };
    }
}
