#!/usr/bin/env bash
# Entrypoint of chipledger/patroni:15. The first argument is the role:
#   etcd      an etcd member; configured by etcd's own ETCD_* variables (ETCD_NAME,
#             ETCD_INITIAL_CLUSTER, ...), data in /var/lib/etcd; runs as the etcd user
#   patroni   a PostgreSQL node managed by Patroni (/etc/patroni/patroni.yml, overridden by the
#             PATRONI_* variables: PATRONI_NAME, PATRONI_SUPERUSER_PASSWORD, ...); as postgres
#   haproxy   the router (/etc/haproxy/haproxy.cfg): 5000 to the primary, 5001 to replicas
# Anything else is run as given (`patronictl list`, `etcdctl member list`, a shell).
set -euo pipefail

role="${1:-}"
[ $# -eq 0 ] || shift
as_user() {
    local user="$1"
    shift
    exec setpriv --reuid="$user" --regid="$user" --init-groups "$@"
}

case "$role" in
    etcd)
        export ETCD_DATA_DIR="${ETCD_DATA_DIR:-/var/lib/etcd/member-data}"
        mkdir -p "$ETCD_DATA_DIR"
        chown etcd:etcd "$ETCD_DATA_DIR"
        chmod 0700 "$ETCD_DATA_DIR"
        as_user etcd etcd "$@"
        ;;
    patroni)
        : "${PATRONI_NAME:?set PATRONI_NAME (unique per node)}"
        : "${PATRONI_SUPERUSER_PASSWORD:?set PATRONI_SUPERUSER_PASSWORD}"
        : "${PATRONI_REPLICATION_PASSWORD:?set PATRONI_REPLICATION_PASSWORD}"
        : "${CHIPLEDGER_ADMIN_PASSWORD:?set CHIPLEDGER_ADMIN_PASSWORD (role of the admin step)}"
        # Addresses other members and the router reach this node by: its name on the network.
        export PATRONI_RESTAPI_CONNECT_ADDRESS="${PATRONI_RESTAPI_CONNECT_ADDRESS:-${PATRONI_NAME}:8008}"
        export PATRONI_POSTGRESQL_CONNECT_ADDRESS="${PATRONI_POSTGRESQL_CONNECT_ADDRESS:-${PATRONI_NAME}:5432}"
        chown postgres:postgres /var/lib/postgresql/data
        chmod 0700 /var/lib/postgresql/data
        as_user postgres patroni /etc/patroni/patroni.yml
        ;;
    haproxy)
        as_user haproxy haproxy -W -db -f /etc/haproxy/haproxy.cfg "$@"
        ;;
    "")
        echo "usage: ha-entrypoint.sh etcd|patroni|haproxy|COMMAND..." >&2
        exit 2
        ;;
    *)
        exec "$role" "$@"
        ;;
esac
