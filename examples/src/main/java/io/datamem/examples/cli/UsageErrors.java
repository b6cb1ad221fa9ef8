package io.datamem.examples.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

/**
 * Option values that picocli's types cannot check: each is reported as a usage error
 * ({@link ParameterException}), so that {@link DatamemCli} prints it with the usage and exits with
 * {@value DatamemCli#USAGE}, as it does for picocli's own checks.
 */
final class UsageErrors {

    private UsageErrors() {
    }

    /**
     * The usage error for an option value out of its range.
     *
     * @param spec     the command the option belongs to
     * @param option   the option's name, such as {@code --elements}
     * @param value    the value given
     * @param expected what is accepted, such as {@code >= 1}
     * @return the exception to throw
     */
    static ParameterException invalid(CommandSpec spec, String option, Object value, String expected) {
        return new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                + " (expected: " + expected + ")");
    }

    /**
     * Makes what an option value names, such as a handler from its name; an
     * {@link IllegalArgumentException} (an unknown or malformed name, a handler that does not fit)
     * becomes a usage error. Other exceptions, such as the {@link IllegalStateException} of a
     * handler that is unavailable here, pass through: they are failures at run time.
     *
     * @param spec    the command the option belongs to
     * @param option  the option's name, such as {@code --handler}
     * @param value   the value given
     * @param factory makes the thing from the value
     * @param <T>     what the value names
     * @return what {@code factory} made
     * @throws ParameterException if {@code factory} throws an {@link IllegalArgumentException}
     */
    static <T> T named(CommandSpec spec, String option, String value, Function<String, T> factory) {
        try {
            return factory.apply(value);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': "
                    + e.getMessage(), e);
        }
    }

    /**
     * Reads an allocation log a command was given, after checking it can be read: the check and
     * message {@code replay}, {@code snapshot} and {@code view} share.
     *
     * @param option how the command names the log, for the message ({@code LOG})
     * @param log    the file
     * @return its operations, in log order
     * @throws IllegalArgumentException if the file is not readable or a line of it is malformed
     * @throws java.io.UncheckedIOException if reading it fails
     */
    static List<AllocationLog.Entry> readLog(String option, Path log) {
        if (!Files.isReadable(log)) {
            throw new IllegalArgumentException(option + ": " + log + " (expected: a readable allocation log, written by"
                    + " a handler with +log=FILE)");
        }
        return AllocationLog.read(log);
    }
}
