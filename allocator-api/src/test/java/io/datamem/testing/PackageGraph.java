package io.datamem.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The import graph between the packages of one module's main sources, read from the source files:
 * an edge {@code p -> q} for every reference from code in package {@code p} to a type of
 * {@code q} by its qualified name (imports, static imports and qualified names in code; comments
 * and string literals do not count). Only packages of the module itself are nodes.
 *
 * <p>Run from a module's directory (as Surefire does): it reads {@code src/main/java}.
 */
public final class PackageGraph {

    /** A qualified name: a package (lower-case segments) and a type or {@code *} after it. */
    private static final Pattern QUALIFIED = Pattern.compile("\\b([a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)+)\\.[A-Z*]");

    /** package -> package it uses -> the files that make the edge. */
    private final Map<String, Map<String, Set<String>>> edges;
    /** package -> its number of {@code .java} files, {@code package-info.java} included. */
    private final Map<String, Integer> files;

    private PackageGraph(Map<String, Map<String, Set<String>>> edges, Map<String, Integer> files) {
        this.edges = edges;
        this.files = files;
    }

    /**
     * Reads {@code src/main/java} below the working directory.
     *
     * @return the graph
     * @throws UncheckedIOException if a file cannot be read
     */
    public static PackageGraph ofMainSources() {
        return of(Path.of("src", "main", "java"));
    }

    /**
     * Reads every {@code .java} file below {@code root}.
     *
     * @param root a source root
     * @return the graph
     * @throws UncheckedIOException if a file cannot be read
     */
    public static PackageGraph of(Path root) {
        Map<Path, String> packages = new TreeMap<>();
        Map<Path, String> code = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (f.getFileName().toString().equals("module-info.java")) {
                    continue;
                }
                String text = stripCommentsAndStrings(Files.readString(f, StandardCharsets.UTF_8));
                Matcher m = Pattern.compile("\\bpackage\\s+([\\w.]+)\\s*;").matcher(text);
                if (m.find()) {
                    packages.put(f, m.group(1));
                    code.put(f, text);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Set<String> nodes = new TreeSet<>(packages.values());
        Map<String, Map<String, Set<String>>> edges = new TreeMap<>();
        for (String n : nodes) {
            edges.put(n, new TreeMap<>());
        }
        for (Map.Entry<Path, String> e : code.entrySet()) {
            String from = packages.get(e.getKey());
            Matcher m = QUALIFIED.matcher(e.getValue());
            while (m.find()) {
                String to = m.group(1);
                if (!to.equals(from) && nodes.contains(to)) {
                    edges.get(from).computeIfAbsent(to, k -> new TreeSet<>())
                            .add(e.getKey().getFileName().toString());
                }
            }
        }
        Map<String, Integer> files = new TreeMap<>();
        for (String p : packages.values()) {
            files.merge(p, 1, Integer::sum);
        }
        return new PackageGraph(edges, files);
    }

    /**
     * The packages.
     *
     * @return every package with source, sorted
     */
    public Set<String> packages() {
        return edges.keySet();
    }

    /**
     * The number of source files of a package.
     *
     * @param pkg a package
     * @return its {@code .java} files, {@code package-info.java} included; 0 for an unknown package
     */
    public int fileCount(String pkg) {
        return files.getOrDefault(pkg, 0);
    }

    /**
     * The packages one package uses.
     *
     * @param from a package
     * @return the packages it references, sorted
     */
    public Set<String> uses(String from) {
        return edges.getOrDefault(from, Map.of()).keySet();
    }

    /**
     * The strongly connected components of more than one package: each is an import cycle.
     *
     * @return the cycles, each as its sorted packages
     */
    public List<Set<String>> cycles() {
        List<Set<String>> out = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        int[] counter = {0};
        for (String n : edges.keySet()) {
            if (!index.containsKey(n)) {
                strongConnect(n, index, low, stack, onStack, counter, out);
            }
        }
        return out;
    }

    private void strongConnect(String v, Map<String, Integer> index, Map<String, Integer> low, Deque<String> stack,
                               Set<String> onStack, int[] counter, List<Set<String>> out) {
        index.put(v, counter[0]);
        low.put(v, counter[0]);
        counter[0]++;
        stack.push(v);
        onStack.add(v);
        for (String w : uses(v)) {
            if (!index.containsKey(w)) {
                strongConnect(w, index, low, stack, onStack, counter, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                out.add(component);
            }
        }
    }

    /**
     * Fails, listing every cycle with the edges and files that make it, if the packages form one.
     *
     * @throws AssertionError if there is a cycle
     */
    public void assertNoCycles() {
        List<Set<String>> found = cycles();
        if (!found.isEmpty()) {
            StringBuilder b = new StringBuilder("import cycles between packages:");
            for (Set<String> c : found) {
                b.append('\n').append(c).append(describe(c));
            }
            throw new AssertionError(b.toString());
        }
    }

    /**
     * The edges inside the given packages, with the files that make each, one per line: what a
     * failing cycle check prints.
     *
     * @param component packages
     * @return a description of the edges between them
     */
    public String describe(Set<String> component) {
        StringBuilder b = new StringBuilder();
        for (String from : component) {
            for (Map.Entry<String, Set<String>> e : edges.get(from).entrySet()) {
                if (component.contains(e.getKey())) {
                    b.append("\n  ").append(from).append(" -> ").append(e.getKey()).append(": ").append(e.getValue());
                }
            }
        }
        return b.toString();
    }

    /**
     * Blanks out comments, string and character literals and text blocks.
     *
     * @param s Java source
     * @return the source with only code left
     */
    public static String stripCommentsAndStrings(String s) {
        StringBuilder b = new StringBuilder(s.length());
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                b.append(' ');
            } else if (c == '"' && s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                i = end < 0 ? n : end + 3;
                b.append("\"\"");
            } else if (c == '"' || c == '\'') {
                i++;
                while (i < n && s.charAt(i) != c) {
                    i += s.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
                b.append(c).append(c);
            } else {
                b.append(c);
                i++;
            }
        }
        return b.toString();
    }
}
