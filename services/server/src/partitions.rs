//! `chipledgerd partitions ...`: the operator's side of the log's monthly partitions, on an
//! admin URL like `chipledgerd migrate` (chipledger_store::partition has the rules), and the
//! service's daily making of the partitions ahead.

use std::time::Duration;

use anyhow::Context;
use chipledger_store::checkpoint::CheckpointKey;
use chipledger_store::partition::{ArchiveAdmin, ArchiveVerdict, digest_path_of};
use time::OffsetDateTime;

use crate::config::{Config, PartitionsAction};

/// How often the running service makes the partitions ahead.
pub const ENSURE_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

/// Run one `partitions` action on `admin_url`; what it did goes to stdout.
pub async fn run(config: &Config, admin_url: &str, action: &PartitionsAction) -> anyhow::Result<()> {
    let mut admin = ArchiveAdmin::connect(admin_url).await.context("connecting with the admin URL")?;
    let settings = &config.partitions;
    match action {
        PartitionsAction::List => {
            for partition in admin.list().await? {
                println!(
                    "{:<16} {:<9} until {}  {} {}{}",
                    partition.label,
                    format!("{:?}", partition.state).to_lowercase(),
                    partition.until_at,
                    partition.events_table,
                    partition.postings_table,
                    partition.archive_file.map(|file| format!("  archive {file}")).unwrap_or_default()
                );
            }
        }
        PartitionsAction::Ensure => {
            let created = admin.ensure(settings.months_ahead).await?;
            println!("chipledgerd: {created} month(s) of partitions created ({} kept ahead)", settings.months_ahead);
        }
        PartitionsAction::Archive { label, dir } => {
            let key = signing_key(config)?;
            let dir = dir.clone().unwrap_or_else(|| settings.archive_dir.clone());
            let signed = admin.archive(label, settings.retention_months, &dir, &key, OffsetDateTime::now_utc()).await?;
            let export = dir.join(&signed.archive.file_name);
            println!("chipledgerd: partition {label} archived and detached");
            println!("  export {} (sha256 {})", export.display(), hex::encode(signed.archive.file_sha256));
            println!("  digest {} (signed by key {})", digest_path_of(&export).display(), signed.archive.key_id);
            for property in &signed.archive.properties {
                println!(
                    "  property {}: positions {}..={} ({} events, {} postings), last hash {}",
                    property.property,
                    property.first_position,
                    property.last_position,
                    property.events,
                    property.postings,
                    hex::encode(property.last_hash)
                );
            }
        }
        PartitionsAction::Verify { label } => {
            let verdict = admin.verify(label, &trusted_keys(config)?).await?;
            print_verdict(label, &verdict, "verifies");
        }
        PartitionsAction::Drop { label } => {
            let verdict = admin.drop_archived(label, &trusted_keys(config)?).await?;
            print_verdict(label, &verdict, "verified and its tables are dropped");
        }
    }
    Ok(())
}

fn print_verdict(label: &str, verdict: &ArchiveVerdict, what: &str) {
    println!("chipledgerd: archive of partition {label} {what}: {}", verdict.file.display());
    for (property, anchor, head) in &verdict.live_chains {
        println!("  property {property}: the live chain verifies from the anchor at position {anchor} to {head}");
    }
}

fn signing_key(config: &Config) -> anyhow::Result<CheckpointKey> {
    let path = config.checkpoints.key_file.as_ref().context("archive digests are signed with [checkpoints] key_file, which is not configured")?;
    Ok(CheckpointKey::load(path)?)
}

/// The checkpoint key's public key and the ones it replaced: an archive signed by another is refused.
fn trusted_keys(config: &Config) -> anyhow::Result<Vec<[u8; 32]>> {
    let mut keys = config.checkpoints.previous_public_keys.clone();
    if let Some(path) = &config.checkpoints.key_file {
        keys.push(CheckpointKey::load(path)?.public_key());
    }
    anyhow::ensure!(!keys.is_empty(), "no trusted key: configure [checkpoints] key_file or previous_public_keys");
    Ok(keys)
}

/// Make the partitions ahead in every shard's database now and every [`ENSURE_INTERVAL`] until
/// `stop` resolves (shards added by a reload are included from the next round). A failure is
/// logged loudly and tried again next time: appends are refused only once the last month made
/// runs out (months_ahead months from now).
pub async fn keep_ahead(router: std::sync::Arc<crate::shards::Router>, months_ahead: i32, stop: impl Future<Output = ()>) {
    crate::shutdown::every(ENSURE_INTERVAL, stop, || async {
        for store in router.primaries() {
            match store.ensure_partitions(months_ahead).await {
                Ok(0) => {}
                Ok(created) => tracing::info!(created, months_ahead, "made partitions of the log ahead"),
                Err(error) => tracing::error!(%error, "could not make the partitions of the log ahead"),
            }
        }
    })
    .await
}
