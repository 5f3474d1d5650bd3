//! Verifying the hash chain of a property against its stored hashes and head (see `chain`).

use sqlx::PgPool;

use crate::chain::{self, ChainDigest, ChainProblem, ChainReport, GENESIS_HASH};
use crate::error::StoreError;
use crate::read;

/// The head of the property's chain.
pub(crate) async fn chain_digest(pool: &PgPool, property: &str) -> Result<ChainDigest, StoreError> {
    let row: Option<(i64, Vec<u8>)> = sqlx::query_as("SELECT last_position, last_hash FROM property_heads WHERE property = $1")
        .bind(property)
        .fetch_optional(pool)
        .await?;
    let (position, hash) = row.unwrap_or((0, GENESIS_HASH.to_vec()));
    let hash = hash.try_into().map_err(|_| StoreError::Corrupt("head hash is not 32 bytes".into()))?;
    Ok(ChainDigest { property: property.to_owned(), position, hash })
}

/// Recompute the whole chain of a property and compare it with the stored hashes and head.
pub(crate) async fn verify_chain(pool: &PgPool, property: &str) -> Result<ChainReport, StoreError> {
    let head = chain_digest(pool, property).await?;
    let mut previous = GENESIS_HASH;
    let mut expected_position = 1;
    let mut checked = 0;
    let bad = |position: i64, problem: ChainProblem, checked: i64| ChainReport {
        ok: false,
        events_checked: checked,
        first_bad_position: Some(position),
        problem: Some(problem),
        head: head.clone(),
    };
    loop {
        let page = match read::read_all(pool, property, expected_position - 1, read::clamp_page(i64::MAX)).await {
            Ok(page) => page,
            Err(StoreError::Database(error)) => return Err(StoreError::Database(error)),
            Err(other) => return Ok(bad(expected_position, ChainProblem::Undecodable(other.to_string()), checked)),
        };
        if page.is_empty() {
            break;
        }
        for event in &page {
            if event.position != expected_position {
                return Ok(bad(expected_position, ChainProblem::MissingPosition, checked));
            }
            let recomputed = match chain::recompute(&previous, event) {
                Ok(hash) => hash,
                Err(error) => return Ok(bad(event.position, ChainProblem::Undecodable(error.to_string()), checked)),
            };
            if recomputed != event.hash {
                return Ok(bad(event.position, ChainProblem::HashMismatch, checked));
            }
            previous = recomputed;
            expected_position += 1;
            checked += 1;
        }
    }
    let last = expected_position - 1;
    if last < head.position {
        return Ok(bad(expected_position, ChainProblem::TruncatedTail, checked));
    }
    if last > head.position || previous != head.hash {
        return Ok(bad(last, ChainProblem::HeadMismatch, checked));
    }
    Ok(ChainReport { ok: true, events_checked: checked, first_bad_position: None, problem: None, head })
}

/// Check an externally saved digest: the chain must still verify and still pass through it.
pub(crate) async fn verify_digest(pool: &PgPool, digest: &ChainDigest) -> Result<bool, StoreError> {
    let report = verify_chain(pool, &digest.property).await?;
    if !report.ok {
        return Ok(false);
    }
    let stored: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM events WHERE property = $1 AND position = $2")
        .bind(&digest.property)
        .bind(digest.position)
        .fetch_optional(pool)
        .await?;
    Ok(match stored {
        Some(hash) => hash == digest.hash,
        None => digest.position == 0 && digest.hash == GENESIS_HASH,
    })
}
