import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.ModuleAttribute;
import java.lang.classfile.attribute.ModuleExportInfo;
import java.lang.reflect.AccessFlag;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Counts the public API of datamem's modules from their compiled classes: the public types (nested
 * ones whose enclosing types are public too) of the packages a module exports to everyone, and the
 * public or protected methods and constructors they declare (compiler-made ones left out; record
 * accessors, enum {@code values}/{@code valueOf} counted, as javadoc shows them).
 *
 * <p>Usage, after {@code ./mvnw -DskipTests package}: {@code scripts/api-count allocator-api allocator-impl}
 * (add {@code -v} for one line per type).
 */
public class ApiCount {

    public static void main(String[] args) throws IOException {
        boolean verbose = List.of(args).contains("-v");
        int allTypes = 0;
        int allMethods = 0;
        for (String module : args) {
            if (module.equals("-v")) {
                continue;
            }
            Path classes = Path.of(module, "target", "classes");
            Path descriptor = classes.resolve("module-info.class");
            Map<String, ClassModel> models = new TreeMap<>();
            try (Stream<Path> files = Files.walk(classes)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".class")
                        && !p.getFileName().toString().equals("module-info.class")).toList()) {
                    ClassModel m = ClassFile.of().parse(f);
                    models.put(m.thisClass().asInternalName(), m);
                }
            }
            // A module without a descriptor is an automatic module: it exports every package.
            Set<String> exported = Files.exists(descriptor) ? exports(descriptor) : packagesOf(models.keySet());
            Map<String, Integer> byPackage = new TreeMap<>();
            Map<String, Integer> methodsByPackage = new TreeMap<>();
            int types = 0;
            int methods = 0;
            for (Map.Entry<String, ClassModel> e : models.entrySet()) {
                String name = e.getKey();
                String pkg = name.substring(0, name.lastIndexOf('/')).replace('/', '.');
                if (!exported.contains(pkg) || !isPublicType(name, models)) {
                    continue;
                }
                int count = 0;
                for (MethodModel mm : e.getValue().methods()) {
                    Set<AccessFlag> flags = mm.flags().flags();
                    boolean visible = flags.contains(AccessFlag.PUBLIC) || flags.contains(AccessFlag.PROTECTED);
                    boolean made = flags.contains(AccessFlag.SYNTHETIC) || flags.contains(AccessFlag.BRIDGE);
                    if (visible && !made && !mm.methodName().stringValue().equals("<clinit>")) {
                        count++;
                    }
                }
                types++;
                methods += count;
                byPackage.merge(pkg, 1, Integer::sum);
                methodsByPackage.merge(pkg, count, Integer::sum);
                if (verbose) {
                    System.out.printf("  %-70s %3d%n", name.replace('/', '.'), count);
                }
            }
            for (String pkg : byPackage.keySet()) {
                System.out.printf("%-16s %-32s %4d types %5d methods%n", module, pkg, byPackage.get(pkg),
                        methodsByPackage.get(pkg));
            }
            System.out.printf("%-16s %-32s %4d types %5d methods%n", module, "(all exported)", types, methods);
            allTypes += types;
            allMethods += methods;
        }
        System.out.printf("%-16s %-32s %4d types %5d methods%n", "total", "", allTypes, allMethods);
    }

    private static boolean isPublicType(String name, Map<String, ClassModel> models) {
        ClassModel m = models.get(name);
        if (m == null || !m.flags().flags().contains(AccessFlag.PUBLIC)
                || m.flags().flags().contains(AccessFlag.SYNTHETIC)) {
            return false;
        }
        // A nested type's own class file says public for public and protected members; its
        // enclosing types must be public as well.
        int dollar = name.lastIndexOf('$');
        if (dollar < 0) {
            return true;
        }
        String inner = name.substring(dollar + 1);
        if (inner.isEmpty() || Character.isDigit(inner.charAt(0))) {
            return false;   // anonymous or local
        }
        boolean declaredPublic = m.findAttribute(java.lang.classfile.Attributes.innerClasses()).map(a ->
                a.classes().stream().anyMatch(ic -> ic.innerClass().asInternalName().equals(name)
                        && (ic.flags().contains(AccessFlag.PUBLIC) || ic.flags().contains(AccessFlag.PROTECTED))))
                .orElse(false);
        return declaredPublic && isPublicType(name.substring(0, dollar), models);
    }

    private static Set<String> packagesOf(Set<String> classNames) {
        Set<String> out = new TreeSet<>();
        for (String name : classNames) {
            out.add(name.substring(0, name.lastIndexOf('/')).replace('/', '.'));
        }
        return out;
    }

    private static Set<String> exports(Path moduleInfo) throws IOException {
        ClassModel m = ClassFile.of().parse(moduleInfo);
        ModuleAttribute attr = m.findAttribute(java.lang.classfile.Attributes.module()).orElseThrow();
        Set<String> out = new TreeSet<>();
        for (ModuleExportInfo e : attr.exports()) {
            if (e.exportsTo().isEmpty()) {
                out.add(e.exportedPackage().asSymbol().name().replace('/', '.'));
            }
        }
        return out;
    }
}
