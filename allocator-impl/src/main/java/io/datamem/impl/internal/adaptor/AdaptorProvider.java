package io.datamem.impl.internal.adaptor;

import io.datamem.DataMemAllocator;
import io.datamem.internal.Messages;
import io.datamem.spi.DataMemProvider;
import io.datamem.spi.ProviderContext;
import io.datamem.spi.ProviderTerm;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The common part of the adaptor providers: a family name, the forms listed, and one parse of a
 * term that both {@link #validate} and {@link #createAdaptor} use, so that what validation accepts
 * is exactly what creation builds.
 */
abstract class AdaptorProvider implements DataMemProvider {

    private final String family;
    private final List<String> names;

    AdaptorProvider(String family, String... names) {
        this.family = family;
        this.names = List.of(names);
    }

    @Override
    public final String name() {
        return family;
    }

    @Override
    public final Role role() {
        return Role.ADAPTOR;
    }

    @Override
    public final List<String> names() {
        return names;
    }

    @Override
    public final boolean accepts(ProviderTerm term) {
        return term.family().equals(family);
    }

    /**
     * Reads a term and returns how to wrap an upstream in the adaptor it names. Has no side effect:
     * the returned function has them, when applied.
     *
     * @param term    an accepted term
     * @param context the handler being built
     * @return the wrapping
     * @throws IllegalArgumentException if the term is malformed
     */
    abstract UnaryOperator<DataMemAllocator> parse(ProviderTerm term, ProviderContext context);

    @Override
    public final void validate(ProviderTerm term, ProviderContext context) {
        checkedParse(term, context);
    }

    @Override
    public final DataMemAllocator createAdaptor(ProviderTerm term, DataMemAllocator upstream, ProviderContext context) {
        return checkedParse(term, context).apply(upstream);
    }

    /**
     * {@link #parse}, refusing a handler in parentheses right after the family
     * ({@code limit(shared)2g}) where the family's own parse did not: an adaptor wraps the terms
     * before it and takes no nested handler, and {@link ProviderTerm#argument()} reads past the
     * parentheses, so they would be ignored.
     */
    private UnaryOperator<DataMemAllocator> checkedParse(ProviderTerm term, ProviderContext context) {
        UnaryOperator<DataMemAllocator> wrapping = parse(term, context);
        String text = term.text();
        if (text.length() > family.length() && text.charAt(family.length()) == '(') {
            throw malformed(term, context, String.join(" or ", names) + "; an adaptor takes no handler in"
                    + " parentheses: it wraps the terms before it, as in aligned64+" + family);
        }
        return wrapping;
    }

    /**
     * The term's options ({@link ProviderTerm#options}), its refusal of a malformed list turned into
     * this family's message.
     */
    final List<ProviderTerm.Option> options(ProviderTerm term, ProviderContext context, String family,
                                            String expected) {
        try {
            return term.options(family);
        } catch (IllegalArgumentException e) {
            throw term.refused(context.handlerName(), e.getMessage(), expected);
        }
    }

    /** An option's byte size ({@link ProviderTerm#byteSize}), its refusal turned into this family's message. */
    final long byteSize(ProviderTerm term, ProviderContext context, ProviderTerm.Option option, long maxBytes,
                        String expected) {
        try {
            return ProviderTerm.byteSize(option.key(), option.value(), maxBytes);
        } catch (IllegalArgumentException e) {
            throw term.refused(context.handlerName(), e.getMessage(), expected);
        }
    }

    /** The message for a malformed term. */
    final IllegalArgumentException malformed(ProviderTerm term, ProviderContext context, String expected) {
        return new IllegalArgumentException("handler name " + Messages.quote(context.handlerName()) + ": "
                + Messages.quote(term.text()) + " (expected: " + expected + ")");
    }
}
