# Shared by the offline image builds (deploy/postgres-image/build.sh, deploy/ha/build.sh); sourced,
# not run. One pipeline, driven by variables the caller sets before `debian_image_build`:
#   image_name      log prefix ("postgres-image")
#   tag             the image to make ("chipledger/postgres:15")
#   base_tag        the imported root file system ("chipledger/debian-postgresql-15-base:bookworm")
#   rootfs_name     names the cached tarball ("postgresql-15")
#   rootfs_version  bump when the package list or the slimming changes: the tarball is keyed on it
#   packages        debootstrap --include list, comma separated ("postgresql-15")
#   context_dir     the docker build context (its Dockerfile takes ARG BASE)
#   context_files   the files of it the image is made from (array): their hash decides a rebuild
#   force           1: rebuild everything
# Steps:
#   1. debootstrap a minimal bookworm root file system with the packages (cached as a tarball
#      under $CHIPLEDGER_CACHE_DIR, default /var/cache/chipledger, so re-runs are fast),
#   2. slim it and `docker import` it as a base image,
#   3. `docker build` the image's own layer.
# Idempotent: does nothing when the image exists and was made from the same inputs.

suite="bookworm"
cache_dir="${CHIPLEDGER_CACHE_DIR:-/var/cache/chipledger}"
started_at=$SECONDS

log() { printf '[%s %3ds] %s\n' "$image_name" "$((SECONDS - started_at))" "$*"; }

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

report() {
    local bytes
    bytes="$(docker image inspect -f '{{.Size}}' "$tag")"
    log "image $tag: $((bytes / 1024 / 1024)) MiB; this run took $((SECONDS - started_at)) s"
}

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

    log "debootstrap $suite from $mirror (minbase + $packages)"
    debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" \
        >"${cache_dir}/debootstrap-${rootfs_name}.log" 2>&1 || {
        tail -n 40 "${cache_dir}/debootstrap-${rootfs_name}.log" >&2
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

debian_image_build() {
    rootfs_tar="${cache_dir}/rootfs-${suite}-${rootfs_name}-v${rootfs_version}.tar"
    # What the image is made from: rebuilt when any of it changes, not only when the tag is missing.
    local context_hash built_from
    context_hash="$(cd "$context_dir" && cat "${context_files[@]}" | sha256sum | cut -c1-16)-rootfs${rootfs_version}"
    built_from="$(docker image inspect -f '{{index .Config.Labels "org.chipledger.context"}}' "$tag" 2>/dev/null || true)"
    if [ "$force" = 0 ] && [ "$built_from" = "$context_hash" ]; then
        log "image $tag is up to date (use --force to rebuild)"
        report
        return 0
    fi

    mkdir -p "$cache_dir"
    # One build at a time per machine (CI and a developer may both run this).
    exec 9>"${cache_dir}/build.lock"
    flock 9

    if [ "$force" = 1 ] || [ ! -f "$rootfs_tar" ]; then
        build_rootfs_tarball
    else
        log "using cached $rootfs_tar"
    fi

    # Import when the base is missing or was made from another root file system version.
    local base_version
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
    local build_args=(--build-arg "BASE=${base_tag}" --label "org.chipledger.context=${context_hash}" -t "$tag" "$context_dir")
    DOCKER_BUILDKIT=0 docker build -q "${build_args[@]}" >/dev/null 2>&1 ||
        DOCKER_BUILDKIT=0 docker build "${build_args[@]}"
    # Leftovers of earlier builds: replaced (now untagged) images, older tarballs of this root
    # file system (another image's tarballs stay).
    docker image prune -f --filter label=org.chipledger.image >/dev/null 2>&1 || true
    find "$cache_dir" -maxdepth 1 -name "rootfs-${suite}-${rootfs_name}-v*.tar" ! -path "$rootfs_tar" -delete
    report
}

# The usual command line of a build script: [--force] [--tag NAME:TAG]; sets force and tag.
debian_image_args() {
    force=0
    while [ $# -gt 0 ]; do
        case "$1" in
            --force) force=1 ;;
            --tag) tag="${2:?--tag needs a value}"; shift ;;
            *) echo "usage: $0 [--force] [--tag NAME:TAG]" >&2; exit 2 ;;
        esac
        shift
    done
}
