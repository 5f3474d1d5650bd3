#!/usr/bin/env bash
# Entrypoint of chipledger's PostgreSQL image, compatible with the official postgres image's
# environment: POSTGRES_PASSWORD, POSTGRES_USER (default postgres), POSTGRES_DB (default: the
# user's name), POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), POSTGRES_INITDB_ARGS,
# POSTGRES_INITDB_WALDIR, PGDATA, and /docker-entrypoint-initdb.d/*.sql|*.sh run once after initdb.
#
# Log lines, as the official image prints them (testcontainers' Postgres module waits for both):
# the temporary initialisation server logs to stdout, the real server to stderr, each ending its
# start-up with "database system is ready to accept connections".
set -Eeuo pipefail

# `docker run IMAGE -c fsync=off` means `postgres -c fsync=off`.
if [ "${1:0:1}" = '-' ]; then
    set -- postgres "$@"
fi

if [ "$1" != 'postgres' ]; then
    exec "$@"
fi

# As root: prepare directories, then run this script again as the postgres user.
if [ "$(id -u)" = '0' ]; then
    mkdir -p "$PGDATA"
    chown postgres:postgres "$PGDATA"
    chmod 0700 "$PGDATA"
    if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
        mkdir -p "$POSTGRES_INITDB_WALDIR"
        chown postgres:postgres "$POSTGRES_INITDB_WALDIR"
    fi
    exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

export POSTGRES_USER="${POSTGRES_USER:-postgres}"
export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
auth_method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"

initialise() {
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth_method" != 'trust' ]; then
        cat >&2 <<'TEXT'
Error: the database is uninitialised and no superuser password is set.
Set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust to allow every connection
without a password: never do that outside a throwaway test).
TEXT
        exit 1
    fi

    local initdb_args=(--username="$POSTGRES_USER" --encoding=UTF8 --locale=C)
    if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
        initdb_args+=(--waldir="$POSTGRES_INITDB_WALDIR")
    fi
    # shellcheck disable=SC2206 # word splitting of POSTGRES_INITDB_ARGS is its documented use
    initdb_args+=(${POSTGRES_INITDB_ARGS:-})
    if [ -n "${POSTGRES_PASSWORD:-}" ]; then
        initdb "${initdb_args[@]}" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD")
    else
        initdb "${initdb_args[@]}"
    fi

    printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
    printf '\nhost all all all %s\n' "$auth_method" >>"$PGDATA/pg_hba.conf"

    # Temporary server on the Unix socket only; pg_ctl without -l sends its log to stdout.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start

    local psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
    if [ "$POSTGRES_DB" != 'postgres' ]; then
        "${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
    fi
    local file
    for file in /docker-entrypoint-initdb.d/*; do
        case "$file" in
            *.sh) echo "running $file"; bash "$file" ;;
            *.sql) echo "running $file"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$file" ;;
            */\*) ;; # empty directory
            *) echo "ignoring $file" ;;
        esac
    done

    pg_ctl -D "$PGDATA" -m fast -w stop
    echo 'PostgreSQL init process complete; ready for start up.'
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    initialise
else
    echo 'PostgreSQL database directory appears to contain a database; skipping initialisation'
fi

exec "$@"
