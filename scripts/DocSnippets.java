import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Compiles the Java snippets of docs/*.md that are marked for it, against the modules' compiled
 * classes, so that a page's code keeps naming the API as it is.
 *
 * <p>A snippet opts in with an HTML comment on the line just before its {@code ```java} fence
 * (invisible on the rendered page):
 *
 * <ul>
 *   <li>{@code <!-- snippet: unit -->}: the block is a whole compilation unit (a class with its
 *       imports);
 *   <li>{@code <!-- snippet: body -->}: the block is statements; its {@code import} lines are kept
 *       as imports and the rest becomes the body of a method, with the packages of {@link #IMPORTS}
 *       imported;
 *   <li>{@code <!-- snippet: body given="Type name, Type other" -->}: the same, the names the
 *       snippet uses without declaring them given as the method's parameters.
 * </ul>
 *
 * <p>Usage: {@code java scripts/DocSnippets.java CLASSPATH [FILE.md ...]} (docs/*.md by default).
 * Prints each snippet's page and line with javac's messages, and exits with 1 if any fails to
 * compile, 2 on bad usage or a malformed marker.
 */
public final class DocSnippets {

    /** Packages every body snippet may use without importing them. */
    static final List<String> IMPORTS = List.of(
            "io.datamem", "io.datamem.array", "io.datamem.buffer", "io.datamem.dlpack",
            "io.datamem.format", "io.datamem.usm", "io.datamem.spi", "io.datamem.impl",
            "io.datamem.impl.adaptor", "io.datamem.impl.snapshot", "io.datamem.impl.pool",
            "io.datamem.impl.placement", "io.datamem.impl.micrometer", "io.datamem.cuda",
            "io.datamem.sycl", "io.datamem.numpy", "io.datamem.arrow", "io.datamem.jna",
            "java.lang.foreign", "java.lang.invoke", "java.nio.file", "java.util",
            "java.util.concurrent", "java.util.function");

    private static final Pattern MARKER =
            Pattern.compile("<!--\\s*snippet:\\s*(unit|body)(?:\\s+given=\"([^\"]*)\")?\\s*-->\\s*");

    private record Snippet(Path page, int line, String kind, String given, List<String> lines) {}

    private DocSnippets() {}

    /**
     * Extracts, writes and compiles every marked snippet.
     *
     * @param args the class path, then the pages (docs/*.md when none)
     * @throws IOException if a page cannot be read or a source file written
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: java scripts/DocSnippets.java CLASSPATH [FILE.md ...]");
            System.exit(2);
        }
        List<Path> pages = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            pages.add(Path.of(args[i]));
        }
        if (pages.isEmpty()) {
            try (Stream<Path> docs = Files.list(Path.of("docs"))) {
                docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
            }
        }
        List<Snippet> snippets = new ArrayList<>();
        for (Path page : pages) {
            snippets.addAll(extract(page));
        }
        classPath = Stream.of(args[0].split(java.io.File.pathSeparator)).filter(e -> !e.isEmpty())
                .map(Path::of).toList();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Path out = Files.createTempDirectory("doc-snippets");
        int failed = 0;
        for (int i = 0; i < snippets.size(); i++) {
            Snippet s = snippets.get(i);
            Path dir = Files.createDirectories(out.resolve("s" + i));
            String source = source(s, "Snippet" + i);
            Path file = dir.resolve(s.kind().equals("unit") ? unitName(s) + ".java" : "Snippet" + i + ".java");
            Files.writeString(file, source);
            int rc = javac.run(null, System.out, System.out, "-proc:none", "-nowarn", "-Xlint:none",
                    "-cp", args[0], "-d", dir.resolve("classes").toString(), file.toString());
            String where = s.page() + ":" + s.line();
            if (rc == 0) {
                System.out.println("ok      " + where);
            } else {
                System.out.println("FAILED  " + where + " (source: " + file + ")");
                failed++;
            }
        }
        System.out.println(snippets.size() + " snippet(s), " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    private static List<Snippet> extract(Path page) throws IOException {
        List<String> lines = Files.readAllLines(page);
        List<Snippet> found = new ArrayList<>();
        for (int i = 0; i + 1 < lines.size(); i++) {
            Matcher m = MARKER.matcher(lines.get(i).strip());
            if (!m.matches()) {
                continue;
            }
            if (!lines.get(i + 1).strip().equals("```java")) {
                System.err.println(page + ":" + (i + 1) + ": a snippet marker must precede a ```java fence");
                System.exit(2);
            }
            int end = i + 2;
            while (end < lines.size() && !lines.get(end).strip().equals("```")) {
                end++;
            }
            found.add(new Snippet(page, i + 3, m.group(1), m.group(2) == null ? "" : m.group(2),
                    lines.subList(i + 2, end)));
            i = end;
        }
        return found;
    }

    private static String source(Snippet s, String className) {
        if (s.kind().equals("unit")) {
            return String.join("\n", s.lines()) + "\n";
        }
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : s.lines()) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        StringBuilder src = new StringBuilder();
        IMPORTS.stream().filter(DocSnippets::onClassPath)
                .forEach(p -> src.append("import ").append(p).append(".*;\n"));
        src.append("import static java.lang.foreign.ValueLayout.*;\n");
        src.append(imports);
        src.append("final class ").append(className).append(" {\n")
                .append("    @SuppressWarnings(\"unused\")\n")
                .append("    static void run(").append(s.given()).append(") throws Throwable {\n")
                .append(body)
                .append("    }\n}\n");
        return src.toString();
    }

    private static List<Path> classPath = List.of();

    /** Whether a package of {@link #IMPORTS} is in the JDK or in a directory of the class path. */
    private static boolean onClassPath(String pkg) {
        if (pkg.startsWith("java.")) {
            return true;
        }
        Path rel = Path.of(pkg.replace('.', '/'));
        return classPath.stream().anyMatch(d -> Files.isDirectory(d.resolve(rel)));
    }

    private static String unitName(Snippet s) {
        Matcher m = Pattern.compile("public\\s+(?:final\\s+|abstract\\s+)*(?:class|interface|record|enum)\\s+(\\w+)")
                .matcher(String.join("\n", s.lines()));
        return m.find() ? m.group(1) : "Snippet";
    }
}
