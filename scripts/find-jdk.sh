# Sourced by ./datamem and benchmarks/run: find_jdk prints the home of a JDK 25 or newer, found
# without JAVA_HOME being required: $DATAMEM_JAVA_HOME, $JAVA_HOME, `java` on the PATH, then the
# usual install locations. It returns 1 when there is none.

major_of() { # prints the feature version of the JDK at $1 (a JAVA_HOME), or nothing
  [ -f "$1/release" ] || return 0
  sed -n 's/^JAVA_VERSION="\{0,1\}\([0-9][0-9]*\).*/\1/p' "$1/release" | head -n 1
}

find_jdk() {
  for home in "${DATAMEM_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    [ -n "$home" ] && [ -x "$home/bin/java" ] && [ "$(major_of "$home")" -ge 25 ] 2>/dev/null && { echo "$home"; return; }
  done
  if command -v java >/dev/null 2>&1; then
    home=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.home = //p')
    [ -n "$home" ] && [ "$(major_of "$home")" -ge 25 ] 2>/dev/null && { echo "$home"; return; }
  fi
  for home in /usr/lib/jvm/* "$HOME"/.jdks/* "$HOME"/.sdkman/candidates/java/* /opt/java/* /usr/java/* \
              /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -x "$home/bin/java" ] && [ "$(major_of "$home")" -ge 25 ] 2>/dev/null && { echo "$home"; return; }
  done
  return 1
}
