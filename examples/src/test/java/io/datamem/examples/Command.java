package io.datamem.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A command the integration tests run as a user would: in a directory, without standard input,
 * with {@code DATAMEM_HANDLER} unset unless given, its output and error streams together.
 *
 * @param exit the exit status
 * @param out  what it printed
 */
record Command(int exit, String out) {

    /**
     * Runs a command and waits for it.
     *
     * @param dir     the working directory
     * @param env     environment variables to set
     * @param minutes how long it may take before the test fails
     * @param command the command and its arguments
     * @return its exit status and output
     */
    static Command run(Path dir, Map<String, String> env, long minutes, List<String> command)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().remove("DATAMEM_HANDLER");
        pb.environment().remove("MAVEN_OPTS");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(minutes, TimeUnit.MINUTES), "finished: " + command);
        return new Command(p.exitValue(), out);
    }
}
