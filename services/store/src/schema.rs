//! The admin step: roles, migrations, functions and grants, as one explicit operation.
//!
//! `chipledgerd migrate` (a Kubernetes Job, or the embedded mode at its start) runs
//! [`crate::Store::migrate`] with an admin URL; the service itself connects with the application
//! role's own credentials and only checks that the database is what it was built for
//! ([`crate::Store::check_schema`]). Steps, all on one connection holding a session advisory
//! lock, so two migrate runs (or replicas) at the same moment take turns instead of racing on
//! the catalogs ("tuple concurrently updated"):
//! 1. `sql/roles.sql`: the roles (`chipledger_owner` NOLOGIN, `chipledger_app`), the admin made a
//!    member of the owner, objects an earlier release created as the admin handed to the owner.
//! 2. `SET ROLE chipledger_owner`, then the numbered migrations (tables, indexes, grants): every
//!    object is born owned by the role nobody logs in as.
//! 3. The function files `sql/fn_*.sql` with CREATE OR REPLACE, one file per function, each
//!    SECURITY DEFINER with a pinned search_path, and each in PL/pgSQL, which keeps a plan per
//!    statement for the session: PostgreSQL 15 parses and plans the body of a `LANGUAGE sql`
//!    function with SET clauses again at every call (a stream read took 0.60 ms so, 0.08 ms in
//!    PL/pgSQL, pgbench on one stream; the planning grows with the partitions of the log).
//! 4. Grants: nothing on any table for the application role or PUBLIC; EXECUTE on exactly the
//!    functions of [`FUNCTIONS`] for the application role.
//! 5. `schema_state`: the SHA-256 of the function files, which the service compares at start.
//! 6. Partitions ahead (`chipledger_ensure_partitions`, partition.rs): the months of the log
//!    up to `months_ahead` after the current one exist before anything is appended to them.

use sha2::{Digest, Sha256};
use sqlx::{Connection, PgConnection};

use crate::error::StoreError;
use crate::{APP_ROLE, MIGRATOR, OWNER_ROLE};

/// The functions the application role may execute, each from its own file (`sql/fn_<name>.sql`).
///
/// The append and the reads on the hot paths (a page of the log or a stream, its postings and
/// commands, the head, the lag) pin `plan_cache_mode = force_generic_plan`. Left to choose, the
/// plan cache keeps a custom plan for a read of a few rows (its estimate is below the generic
/// plan's over every partition) and so plans the statement again on every call: a perf profile
/// of a 1-table live run had a sixth of PostgreSQL's time in that planning. Their generic plans
/// are the same index scans (none prunes partitions by a parameter: position is not the key).
pub const FUNCTIONS: &[(&str, &str)] = &[
    ("chipledger_append", include_str!("../sql/fn_chipledger_append.sql")),
    ("chipledger_archive_anchor", include_str!("../sql/fn_chipledger_archive_anchor.sql")),
    ("chipledger_archive_document", include_str!("../sql/fn_chipledger_archive_document.sql")),
    ("chipledger_unanchored_archive_balances", include_str!("../sql/fn_chipledger_unanchored_archive_balances.sql")),
    ("chipledger_account_balances", include_str!("../sql/fn_chipledger_account_balances.sql")),
    ("chipledger_balance_at", include_str!("../sql/fn_chipledger_balance_at.sql")),
    ("chipledger_balances_sum_at", include_str!("../sql/fn_chipledger_balances_sum_at.sql")),
    ("chipledger_checkpoints", include_str!("../sql/fn_chipledger_checkpoints.sql")),
    ("chipledger_latest_checkpoints", include_str!("../sql/fn_chipledger_latest_checkpoints.sql")),
    ("chipledger_command", include_str!("../sql/fn_chipledger_command.sql")),
    ("chipledger_command_count", include_str!("../sql/fn_chipledger_command_count.sql")),
    ("chipledger_commands_range", include_str!("../sql/fn_chipledger_commands_range.sql")),
    ("chipledger_credit_line", include_str!("../sql/fn_chipledger_credit_line.sql")),
    ("chipledger_credit_lines", include_str!("../sql/fn_chipledger_credit_lines.sql")),
    ("chipledger_daily_cash", include_str!("../sql/fn_chipledger_daily_cash.sql")),
    ("chipledger_daily_cash_all", include_str!("../sql/fn_chipledger_daily_cash_all.sql")),
    ("chipledger_departure", include_str!("../sql/fn_chipledger_departure.sql")),
    ("chipledger_departure_log", include_str!("../sql/fn_chipledger_departure_log.sql")),
    ("chipledger_ensure_partitions", include_str!("../sql/fn_chipledger_ensure_partitions.sql")),
    ("chipledger_event_location", include_str!("../sql/fn_chipledger_event_location.sql")),
    ("chipledger_events_by_filter", include_str!("../sql/fn_chipledger_events_by_filter.sql")),
    ("chipledger_events_range", include_str!("../sql/fn_chipledger_events_range.sql")),
    ("chipledger_hashes_at", include_str!("../sql/fn_chipledger_hashes_at.sql")),
    ("chipledger_index_differences", include_str!("../sql/fn_chipledger_index_differences.sql")),
    ("chipledger_head", include_str!("../sql/fn_chipledger_head.sql")),
    ("chipledger_jackpot_day", include_str!("../sql/fn_chipledger_jackpot_day.sql")),
    ("chipledger_lag", include_str!("../sql/fn_chipledger_lag.sql")),
    ("chipledger_max_position", include_str!("../sql/fn_chipledger_max_position.sql")),
    ("chipledger_max_refusal_seq", include_str!("../sql/fn_chipledger_max_refusal_seq.sql")),
    ("chipledger_unchained_refusals", include_str!("../sql/fn_chipledger_unchained_refusals.sql")),
    ("chipledger_player_in_another_case", include_str!("../sql/fn_chipledger_player_in_another_case.sql")),
    ("chipledger_players_in_another_case", include_str!("../sql/fn_chipledger_players_in_another_case.sql")),
    ("chipledger_patron_ids_by_case", include_str!("../sql/fn_chipledger_patron_ids_by_case.sql")),
    ("chipledger_player_session", include_str!("../sql/fn_chipledger_player_session.sql")),
    ("chipledger_player_sessions", include_str!("../sql/fn_chipledger_player_sessions.sql")),
    ("chipledger_position_at", include_str!("../sql/fn_chipledger_position_at.sql")),
    ("chipledger_postings_at", include_str!("../sql/fn_chipledger_postings_at.sql")),
    ("chipledger_postings_range", include_str!("../sql/fn_chipledger_postings_range.sql")),
    ("chipledger_projected_balance", include_str!("../sql/fn_chipledger_projected_balance.sql")),
    ("chipledger_properties", include_str!("../sql/fn_chipledger_properties.sql")),
    ("chipledger_record_checkpoint", include_str!("../sql/fn_chipledger_record_checkpoint.sql")),
    ("chipledger_record_refusal", include_str!("../sql/fn_chipledger_record_refusal.sql")),
    ("chipledger_refusal_hashes_at", include_str!("../sql/fn_chipledger_refusal_hashes_at.sql")),
    ("chipledger_refused_commands", include_str!("../sql/fn_chipledger_refused_commands.sql")),
    ("chipledger_refusals_range", include_str!("../sql/fn_chipledger_refusals_range.sql")),
    ("chipledger_rejections", include_str!("../sql/fn_chipledger_rejections.sql")),
    ("chipledger_report_events", include_str!("../sql/fn_chipledger_report_events.sql")),
    ("chipledger_report_table_day_apply", include_str!("../sql/fn_chipledger_report_table_day_apply.sql")),
    ("chipledger_report_table_day_checkpoint", include_str!("../sql/fn_chipledger_report_table_day_checkpoint.sql")),
    ("chipledger_report_table_day_reset", include_str!("../sql/fn_chipledger_report_table_day_reset.sql")),
    ("chipledger_report_table_day_rows", include_str!("../sql/fn_chipledger_report_table_day_rows.sql")),
    ("chipledger_schema_state", include_str!("../sql/fn_chipledger_schema_state.sql")),
    ("chipledger_seat_stacks", include_str!("../sql/fn_chipledger_seat_stacks.sql")),
    ("chipledger_stream_events", include_str!("../sql/fn_chipledger_stream_events.sql")),
    ("chipledger_streams_events", include_str!("../sql/fn_chipledger_streams_events.sql")),
    ("chipledger_stream_version", include_str!("../sql/fn_chipledger_stream_version.sql")),
    ("chipledger_tray_inventory", include_str!("../sql/fn_chipledger_tray_inventory.sql")),
];

/// Functions only the functions above call (the application role may not execute them), each
/// from its own file too. Migrations 0002, 0003 and 0005 made their first definitions (0003
/// rebuilt the departures with them); what runs is these files, applied after the migrations.
pub const INTERNAL_FUNCTIONS: &[(&str, &str)] = &[
    ("chipledger_apply_projection_ops", include_str!("../sql/fn_chipledger_apply_projection_ops.sql")),
    ("chipledger_project_departure", include_str!("../sql/fn_chipledger_project_departure.sql")),
    ("chipledger_project_departure_reversed", include_str!("../sql/fn_chipledger_project_departure_reversed.sql")),
];

/// Functions the schema itself uses (a CHECK, the append-only triggers, other functions),
/// first made by migrations 0001 and 0008, each from its own file too, applied after the
/// migrations like the others, so that `verify` can compare what the database runs with them.
pub const SCHEMA_FUNCTIONS: &[(&str, &str)] = &[
    ("chipledger_account_non_negative", include_str!("../sql/fn_chipledger_account_non_negative.sql")),
    ("chipledger_refuse_change", include_str!("../sql/fn_chipledger_refuse_change.sql")),
    ("chipledger_refuse_archived_position", include_str!("../sql/fn_chipledger_refuse_archived_position.sql")),
];

/// Every function file: the application role's, the internal ones, the schema's.
pub fn all_functions() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    FUNCTIONS.iter().chain(INTERNAL_FUNCTIONS).chain(SCHEMA_FUNCTIONS)
}

/// The settings a function file gives its function (`SET name = value` lines before its body),
/// as [`setting_key`] puts them, sorted.
pub fn function_settings(text: &str) -> Vec<String> {
    let header = text.split_once("AS $$\n").map_or(text, |(header, _)| header);
    let mut settings: Vec<String> = header
        .lines()
        .filter_map(|line| line.trim().strip_prefix("SET "))
        .filter_map(|setting| setting.split_once(" = ").map(|(name, value)| setting_key(name, value)))
        .collect();
    settings.sort();
    settings
}

/// One setting as `name=value`, the name in lower case and the value unquoted: how a file's
/// `SET TimeZone = 'UTC'` and PostgreSQL's `proconfig` entry `TimeZone=UTC` compare.
pub fn setting_key(name: &str, value: &str) -> String {
    format!("{}={}", name.trim().to_lowercase(), value.trim().trim_matches('\''))
}

/// Whether a function file makes a SECURITY DEFINER function.
pub fn function_is_definer(text: &str) -> bool {
    let header = text.split_once("AS $$\n").map_or(text, |(header, _)| header);
    header.lines().any(|line| line.trim() == "SECURITY DEFINER")
}

const ROLES_SQL: &str = include_str!("../sql/roles.sql");
/// Key of the session advisory lock held for the whole admin step ("chipledg" in ASCII).
const ADMIN_LOCK_KEY: i64 = 0x6368_6970_6c65_6467;
/// Attempts when another database of the same cluster changes the same role at the same moment
/// (catalog rows are cluster-wide; the advisory lock is per database).
const ROLE_ATTEMPTS: usize = 5;

/// What a function file's `LANGUAGE ...` line declares, as `pg_proc` keeps it: the language,
/// the volatility (`i`, `s` or `v`), STRICT, and the parallel mode (`s`, `r` or `u`).
pub fn function_attributes(text: &str) -> (String, char, bool, char) {
    let header = text.split_once("AS $$\n").map_or(text, |(header, _)| header);
    let words: Vec<String> = header
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("LANGUAGE ") || line.starts_with("STRICT") || line.starts_with("RETURNS NULL ON NULL INPUT"))
        .flat_map(|line| line.split_whitespace().map(str::to_uppercase).collect::<Vec<_>>())
        .collect();
    let has = |word: &str| words.iter().any(|w| w == word);
    let language = words.iter().position(|w| w == "LANGUAGE").and_then(|i| words.get(i + 1)).map(|l| l.to_lowercase()).unwrap_or_default();
    let volatility = if has("IMMUTABLE") { 'i' } else if has("STABLE") { 's' } else { 'v' };
    let strict = has("STRICT") || words.windows(2).any(|pair| pair[0] == "NULL" && pair[1] == "ON");
    let parallel = match words.iter().position(|w| w == "PARALLEL").and_then(|i| words.get(i + 1)).map(String::as_str) {
        Some("SAFE") => 's',
        Some("RESTRICTED") => 'r',
        _ => 'u',
    };
    (language, volatility, strict, parallel)
}

/// The body of a function file (between `AS $$` and `$$;`): what PostgreSQL keeps as its source.
pub fn function_body(text: &str) -> Option<&str> {
    text.split_once("AS $$\n").and_then(|(_, rest)| rest.rsplit_once("\n$$;")).map(|(body, _)| body)
}

/// SHA-256 of the function files, as `schema_state` keeps it.
pub fn functions_sha256() -> String {
    let mut hasher = Sha256::new();
    for (name, text) in all_functions() {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// The admin step on `admin_url`: all of it, or (`up_to`) only the migrations up to a version
/// (upgrade tests build a database as an older release left it).
pub(crate) async fn migrate(admin_url: &str, up_to: Option<i64>, months_ahead: i32) -> Result<(), StoreError> {
    let mut conn = PgConnection::connect(admin_url).await?;
    sqlx::query("SELECT pg_advisory_lock($1)").bind(ADMIN_LOCK_KEY).execute(&mut conn).await?;
    let result = admin_step(&mut conn, up_to, months_ahead).await;
    let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)").bind(ADMIN_LOCK_KEY).execute(&mut conn).await;
    conn.close().await?;
    result?;
    unlocked?;
    Ok(())
}

async fn admin_step(conn: &mut PgConnection, up_to: Option<i64>, months_ahead: i32) -> Result<(), StoreError> {
    with_role_retries(conn, ROLES_SQL).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET ROLE {OWNER_ROLE}"))).execute(&mut *conn).await?;
    let owned = async {
        match up_to {
            // run_direct: a Send future on a borrowed connection (run/run_to are not).
            Some(version) => MIGRATOR.run_direct(Some(version), &mut *conn, false).await?,
            None => {
                MIGRATOR.run_direct(None, &mut *conn, false).await?;
                install_functions(conn).await?;
                crate::partition::ensure_partitions(&mut *conn, months_ahead).await?;
            }
        }
        Ok::<(), StoreError>(())
    }
    .await;
    sqlx::raw_sql("RESET ROLE").execute(&mut *conn).await?;
    owned
}

async fn install_functions(conn: &mut PgConnection) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    // What this build installed before and differs now was changed behind it: said before it is
    // replaced, so the start leaves a trace of it (the evidence pass: a restart put STRICT
    // listings right again and no line said they had been wrong).
    let installed: Option<String> =
        sqlx::query_scalar("SELECT functions_sha256 FROM schema_state").fetch_optional(&mut *tx).await?.flatten();
    if installed.as_deref() == Some(functions_sha256().as_str()) {
        let changed = crate::verify::functions_changed(&mut tx).await?;
        if !changed.is_empty() {
            tracing::warn!(changed = %changed.join("; "), "the store's functions, tables or application role differ from what this build installed; the functions are installed again, the rest stays for an operator");
        }
    }
    for (_, text) in SCHEMA_FUNCTIONS.iter().chain(INTERNAL_FUNCTIONS).chain(FUNCTIONS) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(*text)).execute(&mut *tx).await?;
    }
    let names = FUNCTIONS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    // Revoked on the owner's objects only (every object of chipledger is the owner's: roles.sql):
    // `ON ALL ... IN SCHEMA` would also name objects of a database administrator's extension
    // in `public`, such as pg_stat_statements, whose reset function PUBLIC may not execute, and
    // revoking on an object one holds no privilege on is an error, which stopped the admin step.
    let grants = format!(
        "DO $$\n\
         DECLARE o record;\n\
         BEGIN\n\
             FOR o IN SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE ' ELSE 'TABLE ' END || c.oid::regclass::text AS object\n\
                        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace\n\
                       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')\n\
                         AND c.relowner = current_user::regrole\n\
                      UNION ALL\n\
                      SELECT 'ROUTINE ' || p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace\n\
                       WHERE n.nspname = 'public' AND p.proowner = current_user::regrole\n\
             LOOP\n\
                 EXECUTE format('REVOKE ALL ON %s FROM PUBLIC, {APP_ROLE}', o.object);\n\
             END LOOP;\n\
         END\n\
         $$;\n\
         ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER_ROLE} REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;\n\
         GRANT EXECUTE ON FUNCTION {names} TO {APP_ROLE};"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(grants)).execute(&mut *tx).await?;
    sqlx::query(
        "INSERT INTO schema_state (functions_sha256) VALUES ($1) \
         ON CONFLICT (singleton) DO UPDATE SET functions_sha256 = EXCLUDED.functions_sha256",
    )
    .bind(functions_sha256())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Let the application role log in with `password`, unless it already does: the password is
/// only changed when it differs, so replicas and test databases sharing a cluster never
/// rewrite the role row under each other.
pub(crate) async fn set_app_password(admin_url: &str, password: &str) -> Result<(), StoreError> {
    let app = crate::Store::app_options(admin_url, password)?;
    if let Ok(conn) = PgConnection::connect_with(&app).await {
        conn.close().await?;
        return Ok(());
    }
    let mut conn = PgConnection::connect(admin_url).await?;
    let literal: String = sqlx::query_scalar("SELECT quote_literal($1)").bind(password).fetch_one(&mut conn).await?;
    let statement = format!("ALTER ROLE {APP_ROLE} LOGIN PASSWORD {literal}");
    with_role_retries(&mut conn, &statement).await?;
    conn.close().await?;
    Ok(())
}

/// Runs statements on cluster-wide role rows again when another session updated the same row
/// at the same moment (PostgreSQL's "tuple concurrently updated"), a bounded number of times.
async fn with_role_retries(conn: &mut PgConnection, statements: &str) -> Result<(), StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match sqlx::raw_sql(sqlx::AssertSqlSafe(statements.to_owned())).execute(&mut *conn).await {
            Err(error) if attempt < ROLE_ATTEMPTS && concurrently_updated(&error) => {
                tracing::debug!(%error, attempt, "role catalog row changed concurrently, running again");
            }
            other => return Ok(other.map(drop)?),
        }
    }
}

fn concurrently_updated(error: &sqlx::Error) -> bool {
    error.as_database_error().is_some_and(|db| {
        db.message().contains("tuple concurrently updated") || db.message().contains("tuple concurrently deleted")
    })
}

/// What the database has installed, against what this build carries.
pub(crate) async fn check_schema(pool: &sqlx::PgPool) -> Result<(), StoreError> {
    let installed: Result<Option<String>, sqlx::Error> =
        sqlx::query_scalar("SELECT chipledger_schema_state()").fetch_one(pool).await;
    let expected = functions_sha256();
    let installed = match installed {
        Ok(installed) => installed,
        // 42883: the function does not exist (never migrated this far); 42501: not allowed.
        Err(error) if error.as_database_error().and_then(|db| db.code()).is_some_and(|c| c == "42883" || c == "42501") => {
            return Err(StoreError::SchemaMismatch { installed: None, expected, cause: error.to_string() });
        }
        Err(error) => return Err(error.into()),
    };
    if installed.as_deref() != Some(expected.as_str()) {
        return Err(StoreError::SchemaMismatch { installed, expected, cause: "function files differ".into() });
    }
    Ok(())
}
