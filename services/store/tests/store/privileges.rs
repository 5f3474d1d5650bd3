//! R-AUDIT-1: the database itself refuses UPDATE, DELETE and TRUNCATE of the log, for the
//! application role (privileges and trigger) and even for a superuser (trigger). Least
//! privilege: the application role reaches no table at all, only the SECURITY DEFINER functions
//! of `sql/`, each the one in its file, owned by a role nobody logs in as.

use chipledger_store::*;
use sqlx::Connection;

use crate::*;

const STATEMENTS: &[&str] = &[
    "UPDATE events SET event_type = 'Forged'",
    "DELETE FROM events",
    "TRUNCATE events",
    "UPDATE postings SET amount_cents = 0",
    "DELETE FROM postings",
    "TRUNCATE postings",
    "UPDATE commands SET reply = ''",
    "DELETE FROM commands",
    "TRUNCATE commands",
    "DELETE FROM rejections",
    "TRUNCATE rejections",
    "ALTER TABLE events DISABLE TRIGGER events_append_only",
    "DROP TRIGGER events_append_only ON events",
];

/// What the application role may not do either: read or write any table directly.
const APP_ONLY: &[&str] = &[
    "SELECT * FROM events",
    "SELECT * FROM postings",
    "SELECT * FROM commands",
    "SELECT * FROM rejections",
    "SELECT * FROM property_heads",
    "SELECT * FROM account_balances",
    "SELECT * FROM seat_stacks",
    "SELECT * FROM player_departures",
    "SELECT * FROM checkpoints",
    "INSERT INTO rejections (property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role, streams, request) \
     VALUES ('casino-1', 'x', 'X', 'R-X', '[]', '', 'a', 'r', '{}', '{}')",
    "UPDATE account_balances SET balance_cents = balance_cents + 1000000",
    "UPDATE property_heads SET last_position = 0",
    "DELETE FROM player_sessions",
    "INSERT INTO checkpoints VALUES ('casino-1', 0, 0, 'k', now(), '{}')",
    "CREATE TABLE public.shadow (x int)",
    "SELECT chipledger_refuse_change()",
];

/// Every statement of [`STATEMENTS`] and [`APP_ONLY`], sent as the application role, refused.
async fn refused_every_statement(app: &mut sqlx::PgConnection) {
    for statement in STATEMENTS.iter().chain(APP_ONLY) {
        let error = sqlx::query(*statement).execute(&mut *app).await.expect_err(statement);
        let code = error.as_database_error().and_then(|e| e.code()).map(|c| c.into_owned());
        // 42501 insufficient_privilege (grants), 42501 from the trigger, or 42501 must be owner.
        assert_eq!(code.as_deref(), Some("42501"), "{statement}: {error}");
    }
}

#[tokio::test]
async fn r_audit_1_application_role_cannot_update_delete_or_truncate() -> anyhow::Result<()> {
    let db = fresh("privileges_app").await?;
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"));
    request.commands = vec![command("c1", "r")];
    db.store.append(&request).await?;
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let role: String = sqlx::query_scalar("SELECT current_user").fetch_one(&mut app).await?;
    assert_eq!(role, APP_ROLE);
    refused_every_statement(&mut app).await;
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 2);
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

/// What an append is acknowledged on holds whatever defaults the application role gives itself
/// (the insider pass: `ALTER ROLE chipledger_app SET synchronous_commit = off`, which the role
/// may do to itself, reached the service's sessions after a restart, so an acknowledged append
/// could be lost in a crash, and verify passed): the store's connections send the settings the
/// guarantees rest on, and verify names every setting the role or the database carries.
#[tokio::test]
async fn a_role_default_reaches_no_store_connection_and_verify_names_it() -> anyhow::Result<()> {
    let db = fresh("privileges_settings").await?;
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let database: String = sqlx::query_scalar("SELECT current_database()::text").fetch_one(&mut app).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "ALTER ROLE chipledger_app IN DATABASE \"{database}\" SET synchronous_commit = off; \
         ALTER ROLE chipledger_app IN DATABASE \"{database}\" SET default_transaction_isolation = 'serializable'"
    )))
    .execute(&mut app)
    .await?;
    // A connection that sends nothing takes the role's defaults: the attack is real.
    let mut bare = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let setting = "SELECT current_setting('synchronous_commit'), current_setting('default_transaction_isolation')";
    let taken: (String, String) = sqlx::query_as(setting).fetch_one(&mut bare).await?;
    assert_eq!(taken, ("off".to_string(), "serializable".to_string()));
    // The store's own connections keep what the guarantees rest on.
    let store = Store::connect_with(Store::app_options(&db.admin_url, APP_PASSWORD)?, 2).await?;
    let mut tx = store.begin().await?;
    let kept: (String, String) = sqlx::query_as(setting).fetch_one(tx.connection()).await?;
    assert_eq!(kept, ("on".to_string(), "read committed".to_string()));
    drop(tx);
    let report = db.store.verify_log(PROPERTY, &[], &[]).await?;
    assert!(!report.ok(), "{report:?}");
    let named = report.functions_changed.join("; ");
    for setting in ["role chipledger_app: setting synchronous_commit=off", "role chipledger_app: setting default_transaction_isolation=serializable"] {
        assert!(named.contains(setting), "{setting}: {named}");
    }
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER ROLE chipledger_app IN DATABASE \"{database}\" RESET ALL"))).execute(&mut app).await?;
    assert!(db.store.verify_log(PROPERTY, &[], &[]).await?.ok(), "nothing left to name");
    Ok(())
}

#[tokio::test]
async fn r_audit_1_even_a_superuser_is_stopped_by_the_trigger() -> anyhow::Result<()> {
    let db = fresh("privileges_super").await?;
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"));
    request.commands = vec![command("c1", "r")];
    db.store.append(&request).await?;
    let mut superuser = admin(&db.admin_url).await?;
    for statement in &STATEMENTS[..9] {
        let error = sqlx::query(*statement).execute(&mut superuser).await.expect_err(statement);
        assert!(error.to_string().contains("append-only"), "{statement}: {error}");
    }
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 2);
    Ok(())
}

#[tokio::test]
async fn the_application_role_executes_exactly_the_functions_of_sql_and_reaches_no_table() -> anyhow::Result<()> {
    let db = fresh("privileges_functions").await?;
    let mut superuser = admin(&db.admin_url).await?;
    let reachable: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S') \
           AND (has_table_privilege('chipledger_app', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER') \
                OR c.relowner <> 'chipledger_owner'::regrole)",
    )
    .fetch_all(&mut superuser)
    .await?;
    assert_eq!(reachable, Vec::<String>::new(), "tables the application role reaches, or not owned by the owner");
    let executable: Vec<(String, bool, Option<Vec<String>>, String)> = sqlx::query_as(
        "SELECT p.proname::text, p.prosecdef, p.proconfig, p.proowner::regrole::text FROM pg_proc p \
         JOIN pg_namespace n ON n.oid = p.pronamespace \
         WHERE n.nspname = 'public' AND has_function_privilege('chipledger_app', p.oid, 'EXECUTE') ORDER BY p.proname",
    )
    .fetch_all(&mut superuser)
    .await?;
    let mut expected: Vec<&str> = chipledger_store::schema::FUNCTIONS.iter().map(|(name, _)| *name).collect();
    expected.sort_unstable();
    assert_eq!(executable.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), expected);
    for (name, security_definer, config, owner) in &executable {
        assert!(security_definer, "{name} runs with the owner's rights");
        assert!(config.as_ref().is_some_and(|c| c.iter().any(|s| s == "search_path=public, pg_temp")), "{name}: {config:?}");
        assert_eq!(owner, OWNER_ROLE, "{name}");
    }
    let (owner_logs_in, app_creates): (bool, bool) = sqlx::query_as(
        "SELECT (SELECT rolcanlogin FROM pg_roles WHERE rolname = 'chipledger_owner'), \
                has_schema_privilege('chipledger_app', 'public', 'CREATE')",
    )
    .fetch_one(&mut superuser)
    .await?;
    assert_eq!((owner_logs_in, app_creates), (false, false));
    Ok(())
}

/// A database administrator's extension in `public` (pg_stat_statements, the usual one, whose
/// reset function PUBLIC may not execute) does not stop the admin step of an upgrade: the
/// privileges are revoked on the owner's objects, not on everything in the schema, and the
/// application role still reaches no table and executes exactly the functions of `sql/`.
#[tokio::test]
async fn the_admin_step_runs_again_beside_an_extension_in_public_and_least_privilege_holds() -> anyhow::Result<()> {
    let db = fresh("privileges_extension").await?;
    let mut superuser = admin(&db.admin_url).await?;
    sqlx::query("CREATE EXTENSION pg_stat_statements SCHEMA public").execute(&mut superuser).await?;
    Store::migrate(&db.admin_url).await?;
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    refused_every_statement(&mut app).await;
    let executable: Vec<String> = sqlx::query_scalar(
        "SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
         WHERE n.nspname = 'public' AND p.proowner = 'chipledger_owner'::regrole \
           AND has_function_privilege('chipledger_app', p.oid, 'EXECUTE') ORDER BY p.proname",
    )
    .fetch_all(&mut superuser)
    .await?;
    let mut expected: Vec<&str> = chipledger_store::schema::FUNCTIONS.iter().map(|(name, _)| *name).collect();
    expected.sort_unstable();
    assert_eq!(executable, expected);
    // The extension's own privileges are its owner's business, left as they were.
    let reset_by_app: bool =
        sqlx::query_scalar("SELECT has_function_privilege('chipledger_app', 'pg_stat_statements_reset(oid, oid, bigint)', 'EXECUTE')")
            .fetch_one(&mut superuser)
            .await?;
    assert!(!reset_by_app);
    // And the service still works on it.
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"));
    request.commands = vec![command("c1", "r")];
    db.store.append(&request).await?;
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

/// Issue 13: one file per function, applied with CREATE OR REPLACE: what the database runs is
/// the text of its file. Each is PL/pgSQL, whose statement plans last the session (schema.rs:
/// PostgreSQL 15 plans a `LANGUAGE sql` function with SET clauses again at every call).
#[tokio::test]
async fn every_function_in_the_database_is_the_one_in_its_file() -> anyhow::Result<()> {
    let db = fresh("privileges_files").await?;
    let mut superuser = admin(&db.admin_url).await?;
    for (name, text) in chipledger_store::schema::all_functions() {
        let body = chipledger_store::schema::function_body(text).unwrap_or_else(|| panic!("{name}: no `AS $$ ... $$;` body in its file"));
        let installed: Vec<(String, String)> = sqlx::query_as(
            "SELECT p.prosrc, l.lanname::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = $1",
        )
        .bind(name)
        .fetch_all(&mut superuser)
        .await?;
        assert_eq!(installed.len(), 1, "{name}: one function of that name");
        assert_eq!(installed[0].0.trim_matches('\n'), body.trim_matches('\n'), "{name}");
        // The schema's own account check is SQL, inlined where it is asked.
        let language = if *name == "chipledger_account_non_negative" { "sql" } else { "plpgsql" };
        assert_eq!(installed[0].1, language, "{name}: its plans are kept for the session");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_admin_steps_at_the_same_moment_on_a_fresh_database_all_succeed() -> anyhow::Result<()> {
    let server = chipledger_postgres::TestPostgres::shared().await?;
    let admin_url = server.fresh_database("privileges_migrate_race").await?;
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(4));
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let (admin_url, start) = (admin_url.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                Store::migrate(&admin_url).await?;
                Store::set_app_password(&admin_url, APP_PASSWORD).await
            })
        })
        .collect();
    for run in runs {
        run.await??;
    }
    let store = Store::connect_with(Store::app_options(&admin_url, APP_PASSWORD)?, 2).await?;
    store.check_schema().await?;
    Ok(())
}
