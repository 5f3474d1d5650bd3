#!/usr/bin/env bash
# Build a PostgreSQL 15 container image offline, from Debian packages only (no image registry):
#   1. debootstrap a minimal bookworm root file system with postgresql-15 (cached as a tarball
#      under $CHIPLEDGER_CACHE_DIR, default /var/cache/chipledger, so re-runs are fast),
#   2. slim it and `docker import` it as a base image,
#   3. `docker build` the entrypoint layer (compatible with the official postgres image's
#      POSTGRES_* variables, so testcontainers' Postgres module works with it).
# Idempotent: does nothing when the image tag exists, unless --force.
#
# Usage: deploy/postgres-image/build.sh [--force] [--tag NAME:TAG]
set -euo pipefail

tag="chipledger/postgres:15"
force=0
while [ $# -gt 0 ]; do
    case "$1" in
        --force) force=1 ;;
        --tag) tag="${2:?--tag needs a value}"; shift ;;
        *) echo "usage: $0 [--force] [--tag NAME:TAG]" >&2; exit 2 ;;
    esac
    shift
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
suite="bookworm"
# Bump when the package list or the slimming changes: the cached tarball is keyed on it.
rootfs_version="2"
# The imported root file system; also the base of chipledgerd's image (deploy/Dockerfile).
base_tag="chipledger/debian-postgresql-15-base:${suite}"
cache_dir="${CHIPLEDGER_CACHE_DIR:-/var/cache/chipledger}"
rootfs_tar="${cache_dir}/rootfs-${suite}-postgresql-15-v${rootfs_version}.tar"
started_at=$SECONDS

log() { printf '[postgres-image %3ds] %s\n' "$((SECONDS - started_at))" "$*"; }

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

report() {
    local bytes
    bytes="$(docker image inspect -f '{{.Size}}' "$tag")"
    log "image $tag: $((bytes / 1024 / 1024)) MiB; this run took $((SECONDS - started_at)) s"
}

# What the image is made from: rebuilt when any of it changes, not only when the tag is missing.
context_hash="$(cat "$here/Dockerfile" "$here/docker-entrypoint.sh" | sha256sum | cut -c1-16)-rootfs${rootfs_version}"
built_from="$(docker image inspect -f '{{index .Config.Labels "org.chipledger.context"}}' "$tag" 2>/dev/null || true)"
if [ "$force" = 0 ] && [ "$built_from" = "$context_hash" ]; then
    log "image $tag is up to date (use --force to rebuild)"
    report
    exit 0
fi

mkdir -p "$cache_dir"
# One build at a time per machine (CI and a developer may both run this).
exec 9>"${cache_dir}/build.lock"
flock 9

# The Debian mirror this machine already uses (deb822 sources), else the default one.
mirror_for_suite() {
    local file
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '
            BEGIN { RS = ""; FS = "\n" }
            {
                uris = ""; suites = ""
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
                    if ($i ~ /^Suites:/) { suites = " " $i " " }
                }
                if (uris != "" && suites ~ (" " suite " ")) { split(uris, u, " "); print u[1]; exit }
            }' "$file"
    done | head -n 1
}

build_rootfs_tarball() {
    if ! command -v debootstrap >/dev/null; then
        log "installing debootstrap"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    local mirror rootfs
    mirror="$(mirror_for_suite)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    rootfs="$(mktemp -d "${cache_dir}/rootfs.XXXXXX")"
    # shellcheck disable=SC2064 # expand now: the path is fixed
    trap "rm -rf '$rootfs'" EXIT

    log "debootstrap $suite from $mirror (minbase + postgresql-15)"
    debootstrap --variant=minbase --include=postgresql-15 "$suite" "$rootfs" "$mirror" \
        >"${cache_dir}/debootstrap.log" 2>&1 || {
        tail -n 40 "${cache_dir}/debootstrap.log" >&2
        exit 1
    }

    log "slimming"
    # The package's postinst created a cluster 'main'; the image makes its own in PGDATA.
    rm -rf "$rootfs"/var/lib/postgresql/15 "$rootfs"/etc/postgresql/15
    # Documentation, manuals, translations, caches, package lists.
    rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
        "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/i18n "$rootfs"/usr/share/lintian "$rootfs"/usr/share/postgresql/15/man \
        "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
        "$rootfs"/var/log/* "$rootfs"/tmp/*
    # JIT compilation through LLVM is the largest part (~120 MB with LLVM's z3) and buys nothing
    # for short OLTP statements: drop the provider and its libraries, and switch JIT off.
    rm -rf "$rootfs"/usr/lib/postgresql/15/lib/llvmjit* "$rootfs"/usr/lib/postgresql/15/lib/bitcode \
        "$rootfs"/usr/lib/x86_64-linux-gnu/libLLVM-*.so* "$rootfs"/usr/lib/x86_64-linux-gnu/libz3.so*
    printf '\njit = off\n' >>"$rootfs"/usr/share/postgresql/15/postgresql.conf.sample
    # Every server binary and module still finds all its libraries (fail the build otherwise).
    local missing
    missing="$(chroot "$rootfs" sh -c \
        'for f in /usr/lib/postgresql/15/bin/* /usr/lib/postgresql/15/lib/*.so; do ldd "$f" | sed "s|^|$f: |"; done' |
        grep 'not found' || true)"
    if [ -n "$missing" ]; then
        echo "slimming removed libraries still in use:" >&2
        echo "$missing" >&2
        exit 1
    fi

    log "packing $rootfs_tar"
    tar --numeric-owner -C "$rootfs" -cf "${rootfs_tar}.partial" .
    mv "${rootfs_tar}.partial" "$rootfs_tar"
    rm -rf "$rootfs"
    trap - EXIT
}

if [ "$force" = 1 ] || [ ! -f "$rootfs_tar" ]; then
    build_rootfs_tarball
else
    log "using cached $rootfs_tar"
fi

# Import when the base is missing or was made from another root file system version.
base_version="$(docker image inspect -f '{{index .Config.Labels "org.chipledger.rootfs"}}' "$base_tag" 2>/dev/null || true)"
if [ "$force" = 1 ] || [ "$base_version" != "$rootfs_version" ]; then
    log "docker import $base_tag"
    docker import \
        --change "LABEL org.chipledger.image=base org.chipledger.rootfs=${rootfs_version}" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        "$rootfs_tar" "$base_tag" >/dev/null
fi

log "docker build $tag"
# The classic builder: BuildKit is not installed everywhere and we need nothing from it.
build_args=(--build-arg "BASE=${base_tag}" --label "org.chipledger.context=${context_hash}" -t "$tag" "$here")
DOCKER_BUILDKIT=0 docker build -q "${build_args[@]}" >/dev/null 2>&1 ||
    DOCKER_BUILDKIT=0 docker build "${build_args[@]}"
# Leftovers of earlier builds: replaced (now untagged) images, other cached tarballs.
docker image prune -f --filter label=org.chipledger.image >/dev/null 2>&1 || true
find "$cache_dir" -maxdepth 1 -name 'rootfs-*.tar' ! -path "$rootfs_tar" -delete
report
