#!/usr/bin/env bash
# Builds the User-Mode Linux kernel of the `uml` backend (`--backend uml`), once per machine.
#
# The source is a Debian kernel source package (default linux-source-7.3 from
# trixie-backports), fetched with a private apt state under the cache folder (the machine's
# own apt sources are read for the mirror, never changed); the patches in
# python/mptcplab/kernel/uml/*.patch are applied (in name order), and the configuration is
# the source's arch/um x86_64_defconfig with python/mptcplab/kernel/uml/kernel.config merged
# onto it; every option of that file is checked after `olddefconfig`. The kernel is cached
# outside the clone by source version and configuration hash:
#     <cache>/<package version>-<hash>/{linux,config,build.json}
# where <hash> is the first 12 hex digits of the SHA-256 of kernel.config followed by the
# patches in name order.
# where <cache> is $MPTCPLAB_UML_CACHE, else /var/cache/mptcplab/uml for root (shared by the
# machine's users), else ${XDG_CACHE_HOME:-~/.cache}/mptcplab/uml. A kernel already there is
# not built again. build.json records the package, version, configuration hash, compiler,
# host kernel, date and the build's wall time. A kernel built with this configuration is
# reused without looking for a newer source version (no network needed); set
# MPTCPLAB_UML_REFRESH=1 to fetch the suite's current version and build it if it is new.
#
# Build tools (make, gcc, flex, bison, bc, libelf-dev, xz-utils) are installed with apt-get
# when missing (as root); the source tree (about 1.5 GB) is removed after the build.
# Options: MPTCPLAB_UML_SOURCE (package), MPTCPLAB_UML_SUITE (its suite), MPTCPLAB_UML_JOBS.
# MPTCPLAB_UML_TREE=DIR builds from a kernel source tree instead of a Debian package (e.g. a
# kernel.org release that no Debian suite carries, such as the 6.18 series a host runs): the
# tree is copied, never changed; its version is the tree's `make kernelversion`, the package is
# recorded as "tree", and the kernel goes into a cache folder of its own (MPTCPLAB_UML_CACHE,
# required with it).
# The cache key does not hold the package's name: a kernel of another source package (e.g. for
# a version A/B) goes into a cache folder of its own (MPTCPLAB_UML_CACHE), which runs then name
# with the same variable.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PKG=${MPTCPLAB_UML_SOURCE:-linux-source-7.3}
SUITE=${MPTCPLAB_UML_SUITE:-trixie-backports}
JOBS=${MPTCPLAB_UML_JOBS:-$(nproc)}
config="$repo/python/mptcplab/kernel/uml/kernel.config"
patches=()
for p in "$repo"/python/mptcplab/kernel/uml/*.patch; do
    [ -f "$p" ] && patches+=("$p")
done
if [ -n "${MPTCPLAB_UML_CACHE:-}" ]; then
    cache=$MPTCPLAB_UML_CACHE
elif [ "$(id -u)" = 0 ]; then
    cache=/var/cache/mptcplab/uml
else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/mptcplab/uml
fi
# Bad input is refused before anything is created (exit 2).
TREE=${MPTCPLAB_UML_TREE:-}
if [ -n "$TREE" ]; then
    if [ ! -f "$TREE/Makefile" ] || [ ! -d "$TREE/arch/um" ]; then
        echo "error: setup-uml: MPTCPLAB_UML_TREE=$TREE is not a kernel source tree (no Makefile or arch/um)" >&2
        exit 2
    fi
    if [ -z "${MPTCPLAB_UML_CACHE:-}" ]; then
        echo "error: setup-uml: MPTCPLAB_UML_TREE needs MPTCPLAB_UML_CACHE (a cache folder of its own)" >&2
        exit 2
    fi
    PKG=tree
    SUITE=-
fi
mkdir -p "$cache"
conf_sha=$(cat "$config" "${patches[@]}" | sha256sum | cut -d' ' -f1)
conf_hash=${conf_sha:0:12}
if [ "${MPTCPLAB_UML_REFRESH:-0}" != 1 ]; then
    for built in "$cache"/*-"$conf_hash"/linux; do
        if [ -x "$built" ] && grep -qF "\"package\": \"$PKG\"" "$(dirname "$built")/build.json" 2>/dev/null; then
            echo "setup-uml: the kernel $(basename "$(dirname "$built")") is built: $built"
            exit 0
        fi
    done
fi

need=()
for tool in make:make gcc:gcc flex:flex bison:bison bc:bc xz:xz-utils dpkg-deb:dpkg patch:patch; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
[ -e /usr/include/libelf.h ] || need+=(libelf-dev)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "error: setup-uml: missing build tools: ${need[*]} (install them, or run this as root)" >&2
        exit 1
    fi
    echo "setup-uml: installing ${need[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

fetch_package() {
    # A private apt state for the source package's suite, on the machine's own Debian mirror.
    mirror=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
        | grep -oE 'https?://[^ ]*/debian/?' | grep -v security | head -1 || true)
    mirror=${mirror:-http://deb.debian.org/debian}
    apt_dir="$cache/apt"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$cache/src"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $SUITE main" > "$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root")
    echo "setup-uml: fetching $PKG from $SUITE ($mirror)"
    apt-get "${apt_opts[@]}" update -qq
    version=$(apt-cache "${apt_opts[@]}" policy "$PKG" | awk '/Candidate:/ {print $2}')
    if [ -z "$version" ] || [ "$version" = "(none)" ]; then
        echo "error: setup-uml: $PKG is not in $SUITE on $mirror" >&2
        exit 1
    fi
}

if [ -n "$TREE" ]; then
    version=$(make -s -C "$TREE" kernelversion)
else
    fetch_package
fi
key="$version-$conf_hash"
dest="$cache/$key"
if [ -x "$dest/linux" ] && [ -f "$dest/build.json" ]; then
    echo "setup-uml: the kernel $key is built: $dest/linux"
    exit 0
fi

work=$(mktemp -d "$cache/build-$key.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
if [ -n "$TREE" ]; then
    echo "setup-uml: copying the source tree $TREE ($version)"
    src="$work/linux-$version"
    cp -a "$TREE" "$src"
    make -s -C "$src" ARCH=um mrproper
else
    deb="$cache/src/${PKG}_${version//:/%3a}_all.deb"
    if [ ! -f "$deb" ]; then
        (cd "$cache/src" && apt-get "${apt_opts[@]}" download "$PKG=$version" >/dev/null)
    fi
    echo "setup-uml: unpacking $PKG $version"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './usr/src/*.tar.xz'
    tar -xJf "$work"/usr/src/linux-source-*.tar.xz -C "$work"
    src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -1)
fi
cd "$src"
for p in "${patches[@]}"; do
    echo "setup-uml: applying $(basename "$p")"
    patch -s -p1 < "$p"
done
make -s ARCH=um x86_64_defconfig
ARCH=um scripts/kconfig/merge_config.sh -m .config "$config" >/dev/null
make -s ARCH=um olddefconfig
# Every option of the fragment must hold as written.
bad=0
while IFS= read -r line; do
    case "$line" in
        CONFIG_*=*) grep -qxF "$line" .config || { echo "error: setup-uml: $line did not hold (.config has: $(grep -E "^(# )?${line%%=*}[= ]" .config || echo nothing))" >&2; bad=1; } ;;
        "# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; ! grep -q "^$opt=" .config || { echo "error: setup-uml: $opt is set" >&2; bad=1; } ;;
    esac
done < "$config"
[ "$bad" = 0 ] || exit 1
echo "setup-uml: building the kernel (make ARCH=um -j$JOBS linux; about 8 minutes on two cores)"
make -s ARCH=um -j"$JOBS" linux
strip -o "$work/linux" linux
cp .config "$work/config"
end=$(date +%s)
cat > "$work/build.json" <<JSON
{
  "package": "$PKG",
  "suite": "$SUITE",
  "version": "$version",
  "kernel_release": "$(make -s ARCH=um kernelrelease)",
  "config_sha256": "$conf_sha",
  "patches": [$(for p in "${patches[@]}"; do printf '"%s",' "$(basename "$p")"; done | sed 's/,$//')],
  "compiler": "$(gcc --version | head -1)",
  "host_kernel": "$(uname -r)",
  "jobs": $JOBS,
  "built_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "build_seconds": $((end - start))
}
JSON
cd "$cache"
mkdir "$work/out"
mv "$work/linux" "$work/config" "$work/build.json" "$work/out/"
rm -rf "$dest"
mv "$work/out" "$dest"
echo "setup-uml: built $dest/linux in $((end - start)) s"
