#!/usr/bin/env bash
# Build the chipledgerd image offline: the release binary, stripped, on an empty base with the
# C library (deploy/Dockerfile). Needs the Debian base image of deploy/postgres-image/build.sh.
#
# Usage: deploy/build-image.sh [--tag NAME:TAG]      (default chipledger/chipledgerd:dev)
set -euo pipefail

tag="chipledger/chipledgerd:dev"
while [ $# -gt 0 ]; do
    case "$1" in
        --tag) tag="${2:?--tag needs a value}"; shift ;;
        *) echo "usage: $0 [--tag NAME:TAG]" >&2; exit 2 ;;
    esac
    shift
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
target="${CARGO_TARGET_DIR:-$repo/target}"
started_at=$SECONDS

cargo build --release -p chipledger-server --bin chipledgerd --manifest-path "$repo/Cargo.toml"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$here/Dockerfile" "$context/"
# Symbols and line tables stay in target/ for profiling; the image gets the bare binary.
strip --strip-all -o "$context/chipledgerd" "$target/release/chipledgerd"
printf 'binary: %s MiB unstripped, %s MiB stripped\n' \
    "$(( $(stat -c %s "$target/release/chipledgerd") / 1024 / 1024 ))" \
    "$(( $(stat -c %s "$context/chipledgerd") / 1024 / 1024 ))"
tar -c -C "$context" Dockerfile chipledgerd | DOCKER_BUILDKIT=0 docker build -q -t "$tag" - >/dev/null
printf 'image %s: %s MiB; this run took %d s\n' "$tag" \
    "$(( $(docker image inspect -f '{{.Size}}' "$tag") / 1024 / 1024 ))" "$((SECONDS - started_at))"
