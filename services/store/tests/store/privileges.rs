//! R-AUDIT-1: the database itself refuses UPDATE, DELETE and TRUNCATE of the log, for the
//! application role (privileges and trigger) and even for a superuser (trigger).

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

#[tokio::test]
async fn r_audit_1_application_role_cannot_update_delete_or_truncate() -> anyhow::Result<()> {
    let db = fresh("privileges_app").await?;
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"));
    request.commands = vec![command("c1", "r")];
    db.store.append(&request).await?;
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let role: String = sqlx::query_scalar("SELECT current_user").fetch_one(&mut app).await?;
    assert_eq!(role, APP_ROLE);
    for statement in STATEMENTS {
        let error = sqlx::query(*statement).execute(&mut app).await.expect_err(statement);
        let code = error.as_database_error().and_then(|e| e.code()).map(|c| c.into_owned());
        // 42501 insufficient_privilege (grants), 42501 from the trigger, or 42501 must be owner.
        assert_eq!(code.as_deref(), Some("42501"), "{statement}: {error}");
    }
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 2);
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
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
