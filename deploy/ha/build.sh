#!/usr/bin/env bash
# Build the high-availability image `chipledger/patroni:15` offline, from Debian bookworm packages
# only: PostgreSQL 15, Patroni (with python3-etcd for its etcd v3 client), etcd (server and
# etcdctl) and HAProxy in one image; the role is the container's first argument (`etcd`,
# `patroni`, `haproxy`, see ha-entrypoint.sh). Same pipeline and cache as the PostgreSQL image
# (deploy/lib/debian-image.sh); idempotent, rebuilt only when its inputs change, --force rebuilds.
#
# Usage: deploy/ha/build.sh [--force] [--tag NAME:TAG]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/debian-image.sh
. "$here/../lib/debian-image.sh"

tag="chipledger/patroni:15"
debian_image_args "$@"
image_name="ha-image"
base_tag="chipledger/debian-patroni-15-base:${suite}"
rootfs_name="patroni-15"
rootfs_version="1"
packages="postgresql-15,patroni,python3-etcd,python3-psycopg2,etcd-server,etcd-client,haproxy"
context_dir="$here/image"
context_files=(Dockerfile ha-entrypoint.sh patroni.yml haproxy.cfg post-bootstrap.sh)
debian_image_build
