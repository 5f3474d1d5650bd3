//! Where PostgreSQL's time goes in one run: pg_stat_statements (loaded by `--profile-sql`,
//! nested statements tracked), reset before the run and read after it.

use std::fmt::Write as _;

use sqlx::PgPool;

/// Statements shown per run.
const TOP: i64 = 12;

/// Zeroes the statistics (before a run).
pub async fn reset(admin: &PgPool) -> anyhow::Result<()> {
    sqlx::query("SELECT pg_stat_statements_reset()").execute(admin).await?;
    Ok(())
}

/// One statement's share of the run.
pub struct Statement {
    toplevel: bool,
    calls: i64,
    total_ms: f64,
    rows: i64,
    query: String,
}

/// The statements that took the most execution time since [`reset`] (the profiler's own
/// queries left out), and the sum of top-level execution time.
pub async fn read(admin: &PgPool) -> anyhow::Result<(Vec<Statement>, f64)> {
    let rows: Vec<(bool, i64, f64, i64, String)> = sqlx::query_as(
        "SELECT toplevel, calls, total_exec_time, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) \
           FROM pg_stat_statements \
          WHERE query NOT LIKE '%pg_stat_statements%' \
          ORDER BY total_exec_time DESC LIMIT $1",
    )
    .bind(TOP)
    .fetch_all(admin)
    .await?;
    let toplevel_ms: f64 = sqlx::query_scalar(
        "SELECT coalesce(sum(total_exec_time), 0)::float8 FROM pg_stat_statements \
          WHERE toplevel AND query NOT LIKE '%pg_stat_statements%'",
    )
    .fetch_one(admin)
    .await?;
    let statements = rows
        .into_iter()
        .map(|(toplevel, calls, total_ms, rows, query)| Statement { toplevel, calls, total_ms, rows, query })
        .collect();
    Ok((statements, toplevel_ms))
}

/// Markdown: one table for a run.
pub fn markdown(label: &str, statements: &[Statement], toplevel_ms: f64, movements: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n**{label}**: {toplevel_ms:.0} ms of top-level statement execution, {:.0} us per chip movement\n",
        toplevel_ms * 1000.0 / movements.max(1) as f64
    );
    let _ = writeln!(out, "| statement | level | calls | total ms | us/call | rows/call | share of top-level |\n|---|---|---:|---:|---:|---:|---:|");
    for statement in statements {
        let query = statement.query.replace('|', "\\|");
        let _ = writeln!(
            out,
            "| `{query}` | {} | {} | {:.0} | {:.0} | {:.1} | {:.0}% |",
            if statement.toplevel { "top" } else { "nested" },
            statement.calls,
            statement.total_ms,
            statement.total_ms * 1000.0 / statement.calls.max(1) as f64,
            statement.rows as f64 / statement.calls.max(1) as f64,
            100.0 * statement.total_ms / toplevel_ms.max(1e-9),
        );
    }
    out
}
