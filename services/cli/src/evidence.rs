//! `chipledger verify` and `chipledger checkpoints fetch`: the auditor's side of the evidence.
//!
//! Checkpoints are kept outside the database, as files this tool writes create-new (never
//! overwritten) into a directory of the auditor's; their signatures are checked here, against
//! a pinned public key when one is given, before the server is asked how the log compares.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use chipledger_proto::v1 as pb;
use chipledger_store::SignedCheckpoint;
use chipledger_store::checkpoint::{CheckpointSink, Kept};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::audit::{VerifyArgs, saved_digest_problem};
use crate::connect::{Client, rpc_error};
use crate::output::Output;

/// Pages of checkpoints fetched at most (bound).
const MAX_PAGES: usize = 10_000;

#[derive(Debug, Subcommand)]
pub enum CheckpointsCommand {
    /// Fetch the server's signed checkpoints (and one signed now) into a directory, checking
    /// each signature first; files already there are kept as they are.
    Fetch(FetchArgs),
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Where to keep them (created if missing).
    #[arg(long)]
    dir: PathBuf,
    /// Public key(s) trusted to sign (64 hex digits, or a file with them or a PEM public key).
    #[arg(long = "public-key")]
    public_keys: Vec<String>,
    /// Do not ask the server to sign the current heads first.
    #[arg(long)]
    no_sign: bool,
}

/// A public key given as 64 hex digits, a file holding them, or a PEM (SPKI) public key file.
fn parse_key(text: &str) -> anyhow::Result<[u8; 32]> {
    let from_hex = |hex_text: &str| -> Option<[u8; 32]> {
        let mut key = [0u8; 32];
        hex::decode_to_slice(hex_text.trim(), &mut key).ok().map(|()| key)
    };
    if let Some(key) = from_hex(text) {
        return Ok(key);
    }
    let contents = std::fs::read_to_string(text).with_context(|| format!("--public-key {text}: not hex, not a readable file"))?;
    if let Some(key) = from_hex(&contents) {
        return Ok(key);
    }
    use ed25519_dalek::pkcs8::DecodePublicKey;
    let key = ed25519_dalek::VerifyingKey::from_public_key_pem(&contents)
        .map_err(|error| anyhow::anyhow!("--public-key {text}: not an Ed25519 public key: {error}"))?;
    Ok(key.to_bytes())
}

/// The keys to trust: the pinned ones, else the one the server publishes (said so).
async fn trusted_keys(client: &mut Client, given: &[String]) -> anyhow::Result<(Vec<[u8; 32]>, bool)> {
    if !given.is_empty() {
        return Ok((given.iter().map(|text| parse_key(text)).collect::<anyhow::Result<_>>()?, true));
    }
    let key = client
        .audit
        .get_checkpoint_key(pb::GetCheckpointKeyRequest {})
        .await
        .map_err(|status| rpc_error("the server's checkpoint key", &status))?
        .into_inner();
    Ok((vec![parse_key(&key.public_key_hex)?], false))
}

pub async fn run(client: &mut Client, command: CheckpointsCommand, output: Output) -> anyhow::Result<ExitCode> {
    match command {
        CheckpointsCommand::Fetch(args) => fetch(client, args, output).await,
    }
}

async fn fetch(client: &mut Client, args: FetchArgs, output: Output) -> anyhow::Result<ExitCode> {
    let (trusted, pinned) = trusted_keys(client, &args.public_keys).await?;
    let sink = CheckpointSink::new(&args.dir);
    let mut documents = Vec::new();
    let mut conflicts = Vec::new();
    if !args.no_sign {
        match client.audit.sign_checkpoint(pb::SignCheckpointRequest { property_id: client.property_id.clone() }).await {
            Ok(signed) => documents.push(signed.into_inner().document),
            // The server found the log disagreeing with a checkpoint it signed before: the
            // listing is still fetched, and the answer says so.
            Err(status) if status.code() == tonic::Code::DataLoss => conflicts.push(format!("the server refused to sign: {}", status.message())),
            Err(status) => return Err(rpc_error("signing a checkpoint", &status)),
        }
    }
    let mut token = String::new();
    for _ in 0..MAX_PAGES {
        let page = client
            .audit
            .list_checkpoints(pb::ListCheckpointsRequest {
                property_id: client.property_id.clone(),
                after_position: 0,
                page: Some(pb::PageRequest { page_size: 1_000, page_token: token.clone() }),
            })
            .await
            .map_err(|status| rpc_error("listing checkpoints", &status))?
            .into_inner();
        documents.extend(page.checkpoints.into_iter().map(|checkpoint| checkpoint.document));
        token = page.page.map(|page| page.next_page_token).unwrap_or_default();
        if token.is_empty() {
            break;
        }
    }
    let (mut kept, mut already, mut refused) = (0, 0, Vec::new());
    for document in documents {
        let signed = match SignedCheckpoint::from_document(&document) {
            Ok(signed) => signed,
            Err(error) => {
                refused.push(error.to_string());
                continue;
            }
        };
        if let Err(error) = signed.verify(&trusted) {
            refused.push(format!("position {}: {error}", signed.checkpoint.position));
            continue;
        }
        match sink.keep(&signed).with_context(|| format!("keeping a checkpoint in {}", args.dir.display()))? {
            Kept::New(_) => kept += 1,
            Kept::Same => already += 1,
            // Two checkpoints signed over different hashes at one position: the log was
            // rewritten after the kept one was signed (or the key is in other hands).
            Kept::Conflict(path) => conflicts.push(format!(
                "position {}, refusal {}: the server served a checkpoint with other hashes than the one kept in {} (hash {} served): the log was rewritten after the kept one was signed; verify against the kept checkpoints",
                signed.checkpoint.position,
                signed.checkpoint.refusal_seq,
                path.display(),
                hex::encode(signed.checkpoint.hash)
            )),
        }
    }
    if output.json {
        println!("{}", json!({"kept": kept, "already_kept": already, "refused": refused, "tampered": conflicts, "key_pinned": pinned}));
    } else {
        println!("checkpoints: {} served; {kept} new kept in {}, {already} kept there already (one file per position)", kept + already + refused.len() + conflicts.len(), args.dir.display());
        if !pinned {
            println!("  (signatures checked against the key the server publishes; pin one with --public-key)");
        }
        for reason in &refused {
            println!("  REFUSED: {reason}");
        }
        for reason in &conflicts {
            println!("  TAMPERED: {reason}");
        }
    }
    Ok(if !conflicts.is_empty() {
        ExitCode::from(TAMPERED_EXIT)
    } else if refused.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `checkpoints fetch`'s exit code when the log was found rewritten: not 1 (a refused document)
/// nor 2 (any error), so automation can tell.
const TAMPERED_EXIT: u8 = 3;

/// A kept checkpoint and the file it is in.
type KeptCheckpoint = (PathBuf, SignedCheckpoint);

/// The kept checkpoints of `dir` for this property: (file, document) of those whose signature
/// verifies with a trusted key, and what is wrong with the others.
fn read_kept(dir: &Path, property: &str, trusted: &[[u8; 32]]) -> anyhow::Result<(Vec<KeptCheckpoint>, Vec<String>)> {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (path, read) in CheckpointSink::read_all(dir).with_context(|| format!("reading {}", dir.display()))? {
        match read {
            Ok(signed) if !property.is_empty() && signed.checkpoint.property != property => {}
            Ok(signed) => match signed.verify(trusted) {
                Ok(()) => good.push((path, signed)),
                Err(error) => bad.push(format!("{}: {error}", path.display())),
            },
            Err(error) => bad.push(format!("{}: {error}", path.display())),
        }
    }
    Ok((good, bad))
}

pub async fn verify(client: &mut Client, args: VerifyArgs, output: Output) -> anyhow::Result<ExitCode> {
    let (kept, untrusted, pinned) = match &args.checkpoints {
        Some(dir) => {
            let (trusted, pinned) = trusted_keys(client, &args.public_keys).await?;
            // The property's own checkpoints, the default property's by its id when none is
            // named (the wave-2 pass: a directory kept for two properties failed verification
            // of an untouched log with the other's checkpoints).
            let property = client
                .ledger
                .get_property(pb::GetPropertyRequest { property_id: client.property_id.clone() })
                .await
                .map_err(|status| rpc_error("reading the property", &status))?
                .into_inner()
                .property_id;
            let (kept, untrusted) = read_kept(dir, &property, &trusted)?;
            (kept, untrusted, pinned)
        }
        None => (Vec::new(), Vec::new(), true),
    };
    let reply = client
        .audit
        .verify_chain(pb::VerifyChainRequest {
            property_id: client.property_id.clone(),
            checkpoints: kept.iter().map(|(_, signed)| signed.to_document()).collect(),
            projections: args.projections,
        })
        .await
        .map_err(|status| rpc_error("verifying the log", &status))?
        .into_inner();
    let head = reply.head.clone().unwrap_or_default();
    let mut problems = Vec::new();
    if let Some(position) = reply.first_bad_position {
        problems.push(format!("event chain: first bad position {position}: {}", reply.problem));
    } else if !reply.problem.is_empty() {
        problems.push(format!("event chain: {}", reply.problem));
    }
    if let Some(seq) = reply.first_bad_refusal {
        problems.push(format!("refusal chain: first bad refusal {seq}: {}", reply.refusal_problem));
    }
    if !reply.functions_changed.is_empty() {
        problems.push(format!("store functions not this build's (the reads go through them): {}", reply.functions_changed.join(", ")));
    }
    if let Some(path) = &args.digest_file
        && let Some(problem) = saved_digest_problem(client, path, &head).await?
    {
        problems.push(problem);
    }
    problems.extend(untrusted.iter().map(|reason| format!("checkpoint not trusted: {reason}")));
    // A checkpoints directory that holds none proves nothing: a scheduled check passing on it
    // would hide that every kept checkpoint is gone (the evidence pass: exit 0 on an empty one).
    if let Some(dir) = &args.checkpoints
        && kept.is_empty()
    {
        problems.push(format!("no checkpoint kept in {}: nothing to verify the log against", dir.display()));
    }
    let file_of = |verdict: &pb::CheckpointVerdict| {
        kept.iter()
            .find(|(_, signed)| {
                signed.checkpoint.position == verdict.global_position
                    && signed.checkpoint.refusal_seq == verdict.refusal_seq
                    && signed.checkpoint.signed_at_ms == verdict.signed_at_unix_ms
            })
            .map(|(path, _)| path.display().to_string())
            .unwrap_or_default()
    };
    let agreeing = reply.checkpoints.iter().filter(|verdict| verdict.agrees).count();
    // Before the first that disagrees: a later agreeing one (a history signed again after a
    // restore to an older backup) proves nothing before it (the operations pass).
    let last_agreeing = reply.checkpoints.iter().take_while(|verdict| verdict.agrees).last();
    let first_disagreeing = reply.checkpoints.iter().find(|verdict| !verdict.agrees);
    if let Some(verdict) = first_disagreeing {
        problems.push(format!(
            "checkpoint at position {} refusal {} ({}) disagrees: {}",
            verdict.global_position,
            verdict.refusal_seq,
            file_of(verdict),
            verdict.reason
        ));
    }
    // The chain and the checkpoints are one verdict; the derived rows another (the audit pass:
    // an edited projection row was headed "CHAIN NOT VERIFIED" over an intact chain).
    let chain_ok = problems.is_empty() && reply.refusal_problem.is_empty() && (reply.ok || !reply.projection_differences.is_empty());
    for difference in &reply.projection_differences {
        problems.push(format!(
            "projection {} {}: stored {}, the events give {}",
            difference.projection, difference.key, difference.stored, difference.recomputed
        ));
    }
    let ok = reply.ok && problems.is_empty();
    if output.json {
        let describe = |verdict: &pb::CheckpointVerdict| {
            json!({"position": verdict.global_position, "refusal_seq": verdict.refusal_seq,
                   "signed_at_ms": verdict.signed_at_unix_ms, "key_id": verdict.key_id, "file": file_of(verdict),
                   "agrees": verdict.agrees, "reason": verdict.reason})
        };
        println!(
            "{}",
            json!({
                "ok": ok,
                "events_checked": reply.events_checked,
                "commands_checked": reply.commands_checked,
                "refusals_checked": reply.refusals_checked,
                "head_position": head.global_position,
                "head_hash_hex": head.chain_hash_hex,
                "refusal_seq": head.refusal_seq,
                "refusal_hash_hex": head.refusal_hash_hex,
                "checkpoints": reply.checkpoints.iter().map(describe).collect::<Vec<_>>(),
                "last_agreeing_checkpoint": last_agreeing.map(describe),
                "key_pinned": pinned,
                "projections_checked": reply.projections_checked,
                "problems": problems,
            })
        );
    } else {
        if ok {
            println!(
                "chain verified: {} events, {} command results, {} refusals; head position {} hash {}",
                reply.events_checked, reply.commands_checked, reply.refusals_checked, head.global_position, head.chain_hash_hex
            );
        } else {
            if chain_ok {
                println!(
                    "chain verified: {} events, {} command results, {} refusals; head position {} hash {}",
                    reply.events_checked, reply.commands_checked, reply.refusals_checked, head.global_position, head.chain_hash_hex
                );
                println!("PROJECTIONS DIFFER FROM THE EVENTS");
            } else {
                println!("CHAIN NOT VERIFIED");
            }
            for problem in &problems {
                println!("  {problem}");
            }
        }
        if args.checkpoints.is_some() {
            println!("checkpoints: the log agrees with {agreeing} of {}", reply.checkpoints.len());
            match last_agreeing {
                Some(verdict) => println!(
                    "  last agreeing checkpoint: position {} refusal {} signed at {} by key {} ({})",
                    verdict.global_position,
                    verdict.refusal_seq,
                    jiff::Timestamp::from_millisecond(verdict.signed_at_unix_ms).map_or_else(|_| format!("{} ms", verdict.signed_at_unix_ms), |at| at.to_string()),
                    verdict.key_id,
                    file_of(verdict)
                ),
                None => println!("  no checkpoint agrees with the log"),
            }
            if !pinned {
                println!("  (signatures checked against the key the server publishes; pin one with --public-key)");
            }
        }
        if reply.projections_checked && reply.projection_differences.is_empty() {
            println!("projections: recomputed from the events, all equal");
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
