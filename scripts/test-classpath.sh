# Sourced by scripts/numa-guest and scripts/gpu-bundle: the test class path of modules, and the
# JUnit Platform console launcher that runs them outside Maven. Run from the repository root, after
# the modules are built (./mvnw install, or package with test classes).

# The console launcher's version: JUnit 5.X.Y ships with the JUnit Platform 1.X.Y.
junit_platform_version() {
  sed -n 's|.*<junit.version>5\.\([0-9][0-9.]*\)</junit.version>.*|1.\1|p' pom.xml | head -n 1
}

# test_classpaths DEST MODULE...: writes MODULE/target/test-classpath.txt (its test-scope
# dependencies, as Maven resolves them) for each module, and copies the console launcher
# (junit-platform-console-standalone-VERSION.jar) into DEST, in one Maven run.
test_classpaths() {
  local dest=$1
  shift
  local modules
  modules=$(IFS=,; echo "$*")
  mkdir -p "$dest"
  ./mvnw -B -q -pl "$modules" dependency:build-classpath dependency:copy -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt \
    -Dartifact="org.junit.platform:junit-platform-console-standalone:$(junit_platform_version)" \
    -DoutputDirectory="$(cd "$dest" && pwd)" </dev/null
}

# dependency_classpath MODULE...: the dependencies of those modules' tests (from their
# target/test-classpath.txt), without the JUnit jars the console launcher bundles, each once.
dependency_classpath() {
  local m
  for m in "$@"; do
    tr ':' '\n' <"$m/target/test-classpath.txt"
  done | grep -v -E '/junit-jupiter[^/]*/|/junit-platform-(commons|engine|launcher|suite[^/]*)/|/opentest4j/|/apiguardian-api/' \
    | awk 'NF && !seen[$0]++' | paste -sd:
}

# tagged_test_classes DIR TAG...: the test classes under DIR (a target/test-classes folder) whose
# class file carries a JUnit @Tag annotation and one of the tags as a constant (a meta-annotation
# carrying a tag counts too), one binary name a line, nested classes left out. Selecting these
# classes spares the launcher loading every class to look for tags.
tagged_test_classes() {
  python3 - "$@" <<'PYEOF'
import pathlib, sys
root, tags = pathlib.Path(sys.argv[1]), sys.argv[2:]
consts = [b'\x01' + len(t).to_bytes(2, 'big') + t.encode() for t in tags]
for f in sorted(root.rglob('*.class')):
    b = f.read_bytes()
    if '$' not in f.name and b'Lorg/junit/jupiter/api/Tag;' in b and any(c in b for c in consts):
        print('.'.join(f.relative_to(root).with_suffix('').parts))
PYEOF
}
