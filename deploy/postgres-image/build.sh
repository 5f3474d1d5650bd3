#!/usr/bin/env bash
# Build a PostgreSQL 15 container image offline, from Debian packages only (no image registry):
# a debootstrap root file system with postgresql-15 (cached), imported as a base image, and the
# entrypoint layer (compatible with the official postgres image's POSTGRES_* variables, so
# testcontainers' Postgres module works with it). The pipeline is deploy/lib/debian-image.sh.
# Idempotent: does nothing when the image is up to date, unless --force.
#
# Usage: deploy/postgres-image/build.sh [--force] [--tag NAME:TAG]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/debian-image.sh
. "$here/../lib/debian-image.sh"

tag="chipledger/postgres:15"
debian_image_args "$@"
image_name="postgres-image"
# The imported root file system; also the base of chipledgerd's image (deploy/Dockerfile).
base_tag="chipledger/debian-postgresql-15-base:${suite}"
rootfs_name="postgresql-15"
rootfs_version="2"
packages="postgresql-15"
context_dir="$here"
context_files=(Dockerfile docker-entrypoint.sh)
debian_image_build
