package io.datamem.impl.os;

import io.datamem.DataMemAllocator;
import io.datamem.spi.ProviderTerm;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the options of a handler-name term: {@code family:opt,opt=value,...(nested)}. Used by the
 * providers of {@code io.datamem.impl.provider}; not an API.
 */
public final class TermOptions {

    private TermOptions() {
    }

    /**
     * The comma-separated items after {@code family:} (or {@code family=}), with the nested name
     * removed.
     *
     * @param term   the term
     * @param family its family
     * @return the items, trimmed, none empty
     * @throws IllegalArgumentException if an item is empty
     */
    public static List<String> items(ProviderTerm term, String family) {
        String text = term.withoutNested().strip();
        String rest = text.substring(family.length()).strip();
        List<String> items = new ArrayList<>();
        if (rest.isEmpty()) {
            return items;
        }
        if (rest.startsWith(":") || rest.startsWith("=")) {
            rest = rest.substring(1);
        } else {
            throw new IllegalArgumentException("'" + term + "' (expected: " + family + " or " + family + ":OPTIONS)");
        }
        for (String item : rest.split(",", -1)) {
            String t = item.strip();
            if (t.isEmpty()) {
                throw new IllegalArgumentException("'" + term + "' has an empty option (expected: "
                        + family + ":OPTION,OPTION,...)");
            }
            items.add(t);
        }
        return items;
    }

    /**
     * Parses a byte size with an optional binary suffix: {@code 4194304}, {@code 4m}, {@code 512k},
     * {@code 1g}, {@code 1t} (also {@code kb}/{@code kib} and so on).
     *
     * @param name  the option's name, for messages
     * @param value the text
     * @return bytes
     * @throws IllegalArgumentException if malformed or above {@link DataMemAllocator#MAX_BYTE_SIZE}
     */
    public static long byteSize(String name, String value) {
        return ByteSizes.parse(name, value, DataMemAllocator.MAX_BYTE_SIZE);
    }
}
