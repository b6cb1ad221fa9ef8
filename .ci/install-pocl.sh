#!/usr/bin/env bash
# Installs the OpenCL runtime the SYCL tests run on: PoCL 6.0 (CPU device, with the extension
# cl_intel_unified_shared_memory), built from Debian trixie's source package against bookworm's
# LLVM 15 and installed into a cache directory outside the repository.
#
# Idempotent and cached: when the cache already holds a complete install, it only checks the
# runtime packages and prints the OCL_ICD_VENDORS value (a few seconds).
#
# Portable on every x86-64 host: the build never asks which CPU it runs on. PoCL's configure would
# read the host CPU's name from `llc --version` and stop where LLVM 15 does not know the CPU ("Host
# CPU: (unknown)", as on CPUs newer than LLVM 15); we name the CPU it compiles for ourselves
# (x86-64, the baseline) and build the "distro" kernel library: one variant per instruction-set
# level (sse2 ... avx512), of which the runtime picks, from the CPU's feature flags rather than its
# model name, the best one the host supports. The cache-line size is fixed too (64 bytes).
#
# Usage: .ci/install-pocl.sh [--print-env | --unknown-host-cpu]
#   --print-env         print only `export OCL_ICD_VENDORS=...` on standard output (for eval)
#   --unknown-host-cpu  build as on a CPU that LLVM 15 cannot name: PoCL's configure runs with an
#                       llc whose `--version` reports "Host CPU: (unknown)" (proves the build
#                       does not depend on the host's CPU model; the result is the same install)
# Environment:
#   DATAMEM_POCL_PREFIX  install directory (default: $HOME/.cache/datamem/pocl-6.0; the Maven
#                        build looks there to point the SYCL tests at it)
#   DATAMEM_POCL_JOBS    parallel build jobs (default: the number of cores)
set -euo pipefail

prefix=${DATAMEM_POCL_PREFIX:-$HOME/.cache/datamem/pocl-6.0}
jobs=${DATAMEM_POCL_JOBS:-$(nproc)}
version_prefix=6.0
# datamem's fixes on top of Debian's source package (.ci/pocl-*.patch); raising the revision
# rebuilds cached installs.
patch_revision=1
# How PoCL is configured; raising it rebuilds cached installs too (2: portable CPU target).
build_revision=2
here=$(cd "$(dirname "$0")" && pwd)
stamp=$prefix/.datamem-install-complete
vendors=$prefix/etc/OpenCL/vendors
print_env=false
unknown_host_cpu=false
case "${1:-}" in
  --print-env) print_env=true ;;
  --unknown-host-cpu) unknown_host_cpu=true ;;
  "") ;;
  *) echo "usage: $0 [--print-env | --unknown-host-cpu]" >&2; exit 2 ;;
esac

log() { echo "install-pocl: $*" >&2; }

# Debian packages: the build needs all of them; the installed runtime needs the LLVM 15 and hwloc
# libraries, clang 15 (PoCL compiles kernels with it at run time) and the ICD loader.
packages=(clang-15 llvm-15-dev libclang-15-dev libclang-cpp15-dev libhwloc-dev ocl-icd-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 cmake pkg-config dpkg-dev patch make g++)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    log "missing packages ${missing[*]} and not root to install them"
    exit 1
  fi
  log "installing ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    "${missing[@]}" >&2
fi

done_message() {
  if $print_env; then
    echo "export OCL_ICD_VENDORS=$vendors"
  else
    log "PoCL $(head -n 1 "$stamp") (datamem patches $patch_revision, build $build_revision) ready in $prefix"
    log "select it with: export OCL_ICD_VENDORS=$vendors"
  fi
}

if ! $unknown_host_cpu && [ -f "$stamp" ] && grep -qx "patches $patch_revision" "$stamp" \
    && grep -qx "build $build_revision" "$stamp" && [ -f "$vendors/pocl.icd" ]; then
  done_message
  exit 0
fi

start=$(date +%s)
# The source and build tree live beside the install and survive a failed build, so that running
# the script again resumes it; they are removed once the install is complete.
build_root=$prefix.build
mkdir -p "$build_root"
src=$(find "$build_root" -mindepth 1 -maxdepth 1 -type d -name 'pocl-*' | head -n 1)
if [ -z "$src" ] || [ ! -f "$src/debian/changelog" ] \
    || [ "$(cat "$build_root/.patches" 2>/dev/null)" != "$patch_revision" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/datamem-pocl-apt.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # A temporary apt configuration that knows only trixie's source index; the system's own sources,
  # lists and caches are neither read nor changed.
  mkdir -p "$work/apt/sources.list.d" "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
  cat >"$work/apt/sources.list" <<'EOF2'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
EOF2
  apt_options=(
    -o Dir::Etc::SourceList="$work/apt/sources.list"
    -o Dir::Etc::SourceParts="$work/apt/sources.list.d"
    -o Dir::State::Lists="$work/apt/lists"
    -o Dir::Cache="$work/apt/cache"
    -o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache=""
    -o APT::Sandbox::User=root
  )
  log "fetching the pocl source package from Debian trixie (temporary apt configuration)"
  apt-get "${apt_options[@]}" update -qq >&2
  rm -rf "$build_root"/pocl*
  (cd "$build_root" && apt-get "${apt_options[@]}" source -qq pocl >/dev/null)
  src=$(find "$build_root" -mindepth 1 -maxdepth 1 -type d -name 'pocl-*' | head -n 1)
  if [ -z "$src" ]; then
    log "apt-get source pocl produced no source tree"
    exit 1
  fi
  for p in "$here"/pocl-*.patch; do
    log "applying $(basename "$p")"
    patch -d "$src" -p1 --quiet <"$p"
  done
  rm -rf "$build_root/build"
  echo "$patch_revision" >"$build_root/.patches"
else
  log "resuming the build in $build_root"
fi
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
case "$version" in
  "$version_prefix"*) ;;
  *) log "trixie's pocl is $version, expected $version_prefix"; exit 1 ;;
esac

log "building pocl $version against LLVM 15 with $jobs jobs (several minutes)"
build=$build_root/build
mkdir -p "$build"
cd "$build" # PoCL's configure checks write scratch files into the working directory
# Debian's patches leave position-independent code to its hardening flags: ask for it directly.
# LLC_HOST_CPU_AUTO preset: PoCL skips asking llc for the host CPU (see the top of this file).
cpu_args=(-DLLC_HOST_CPU_AUTO=x86-64 -DKERNELLIB_HOST_CPU_VARIANTS=distro -DHOST_CPU_CACHELINE_SIZE=64)
if $unknown_host_cpu; then
  masked_llc=$build_root/llc-unknown-host-cpu
  cat >"$masked_llc" <<'EOF2'
#!/usr/bin/env bash
# llc-15, except that `--version` says LLVM does not know the host CPU (as on CPUs newer than LLVM 15).
if [ "$#" -eq 1 ] && [ "$1" = "--version" ]; then
  /usr/lib/llvm-15/bin/llc --version | sed 's/Host CPU: .*/Host CPU: (unknown)/'
else
  exec /usr/lib/llvm-15/bin/llc "$@"
fi
EOF2
  chmod +x "$masked_llc"
  log "configuring with an llc that reports the host CPU as unknown: $("$masked_llc" --version | grep 'Host CPU')"
  cpu_args+=(-DLLVM_LLC="$masked_llc")
fi
rm -f "$build/CMakeCache.txt"
cmake -S "$src" -B "$build" -G "Unix Makefiles" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DWITH_LLVM_CONFIG=/usr/bin/llvm-config-15 \
  -DENABLE_ICD=ON -DENABLE_LEVEL0=OFF -DENABLE_SPIRV=OFF -DENABLE_TESTS=OFF \
  -DENABLE_EXAMPLES=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON "${cpu_args[@]}" \
  >"$build_root/cmake.log" 2>&1 || { tail -n 50 "$build_root/cmake.log" >&2; exit 1; }
nice make -C "$build" -j "$jobs" >"$build_root/make.log" 2>&1 \
  || { tail -n 80 "$build_root/make.log" >&2; log "build failed; run again to resume ($build_root)"; exit 1; }
rm -rf "$prefix"
make -C "$build" install >"$build_root/install.log" 2>&1 \
  || { tail -n 50 "$build_root/install.log" >&2; exit 1; }

# The ICD file of the install: the loader reads every *.icd in the OCL_ICD_VENDORS directory.
library=$(find "$prefix" -name 'libpocl.so*' -type f | head -n 1)
if [ -z "$library" ]; then
  log "the install holds no libpocl.so"
  exit 1
fi
mkdir -p "$vendors"
rm -f "$vendors"/*.icd
echo "$library" >"$vendors/pocl.icd"
printf '%s\npatches %s\nbuild %s\n' "$version" "$patch_revision" "$build_revision" >"$stamp"
cd /
rm -rf "$build_root"
log "built and installed in $(($(date +%s) - start)) s"
done_message
