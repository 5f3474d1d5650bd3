#!/usr/bin/env bash
# Patroni's post_bootstrap hook: runs once, on the node that initialised the cluster, as the
# superuser (the connection URL is the first argument). Creates the role chipledgerd's admin step
# (`chipledgerd migrate`) runs as and the chipledger database. The application role and the
# schema are the admin step's, not this script's.
set -euo pipefail
url="$1"
psql "$url" -v ON_ERROR_STOP=1 -q --set=password="$CHIPLEDGER_ADMIN_PASSWORD" <<'SQL'
CREATE ROLE chipledger LOGIN SUPERUSER PASSWORD :'password';
CREATE DATABASE chipledger OWNER chipledger ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
SQL
