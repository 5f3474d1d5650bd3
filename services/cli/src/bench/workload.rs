//! The workload: the first `--hands` Pluribus hands (files in path order), converted to
//! rules-core commands once, then laid out per run (mode, table count) over lanes. A lane is
//! one dealer: its hands play one after the other, each at its own table (every PHH hand
//! opens a fresh table, cage and players, so table ids are `<run>-<lane>-<hand>`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chipledger_phh::convert::convert_at;
use chipledger_phh::replay::run;
use chipledger_phh::{HandHistory, Streams, load_file};
use chipledger_proto::command_to_wire;
use chipledger_proto::v1 as pb;
use chipledger_rules::TableId;

use crate::approvals::{Approvers, named_fields};
use crate::send::{Header, batch_request, stamp};

/// Most PHH files read (bound; the Pluribus set has 10,000).
const MAX_FILES: usize = 100_000;

/// One hand as it is sent.
pub struct PlannedHand {
    /// Live mode: one typed message per command, each with its own header stamped.
    pub live: Vec<pb::command::Command>,
    /// Batch mode: the same commands as one RecordBatch.
    pub batch: pb::RecordBatch,
}

/// The hands of one run, per lane.
pub struct Plan {
    pub lanes: Vec<Vec<PlannedHand>>,
    pub commands: u64,
    pub movements: u64,
    pub hands: u64,
}

pub fn pluribus_files(phh_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let root = phh_dir.join("pluribus");
    if !root.is_dir() {
        bail!("PHH data missing: {} is not a directory (pass --phh-dir or set CHIPLEDGER_PHH_DIR)", root.display());
    }
    let mut files = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "phh") && files.len() < MAX_FILES {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The first `count` hands that parse, in file order.
pub fn load_hands(phh_dir: &Path, count: usize) -> anyhow::Result<Vec<HandHistory>> {
    let mut hands = Vec::with_capacity(count);
    for file in pluribus_files(phh_dir)? {
        for hand in load_file(&file) {
            if hands.len() == count {
                return Ok(hands);
            }
            hands.push(hand.with_context(|| format!("parsing {}", file.display()))?);
        }
    }
    if hands.len() < count {
        bail!("only {} hands found under {}, {count} asked", hands.len(), phh_dir.display());
    }
    Ok(hands)
}

/// Lays the hands out over `tables` lanes (hand i to lane i mod tables) for one run.
/// `run_tag` names the run in table and command ids (e.g. "live16").
pub fn plan(hands: &[HandHistory], tables: usize, run_tag: &str, property: &str, id_prefix: &str) -> anyhow::Result<Plan> {
    let mut lanes: Vec<Vec<PlannedHand>> = (0..tables).map(|_| Vec::new()).collect();
    let (mut commands, mut movements) = (0, 0);
    for (index, hand) in hands.iter().enumerate() {
        let lane = index % tables;
        let table_id = TableId::new(format!("{run_tag}-{lane}-{}", index / tables))
            .map_err(|rejection| anyhow::anyhow!("table id: {}", rejection.detail))?;
        let conversion = convert_at(hand, table_id).with_context(|| format!("converting {}", hand.origin))?;
        let hand_movements = run(&conversion, &mut Streams::default())
            .map_err(|rejected| anyhow::anyhow!("{}: rules core rejects step: {rejected}", hand.origin))?;
        let hand_id = format!("{id_prefix}.{run_tag}.{lane}.{index}");
        let header = |command_id: String| {
            let mut header = Header::new(command_id, property);
            header.device = Some(format!("bench-lane-{lane}"));
            header
        };
        let mut live = Vec::with_capacity(conversion.steps.len());
        let mut entries = Vec::with_capacity(conversion.steps.len());
        for (step_index, step) in conversion.steps.iter().enumerate() {
            let entry = command_to_wire(&step.command).with_context(|| hand.origin.to_string())?;
            let mut command = entry.clone();
            stamp(&mut command, &header(format!("{hand_id}.{step_index}")));
            live.push(command);
            entries.push(entry);
        }
        commands += live.len() as u64;
        movements += hand_movements as u64;
        lanes[lane].push(PlannedHand { live, batch: batch_request(&header(hand_id), entries) });
    }
    Ok(Plan { lanes, commands, movements, hands: hands.len() as u64 })
}

/// Gets the second persons' approvals of every command of the plan that names one (the fill of
/// each table, buy-ins at or above the supervisor threshold), in both forms: each live command
/// under its own id, each batch entry under its entry id. The conversion's placeholder names
/// give way to the approvers'.
pub async fn approve(plan: &mut Plan, approvers: &mut Approvers, property: &str) -> anyhow::Result<()> {
    for hand in plan.lanes.iter_mut().flatten() {
        for command in &mut hand.live {
            let fields = named_fields(command);
            let command_id = command.header().map(|header| header.command_id.clone()).unwrap_or_default();
            approvers.approve_and_attach(command, &fields, &command_id, property, None).await?;
        }
        let batch_id = hand.batch.header.as_ref().map(|header| header.command_id.clone()).unwrap_or_default();
        for (index, entry) in hand.batch.commands.iter_mut().enumerate() {
            let Some(command) = entry.command.as_mut() else { continue };
            let fields = named_fields(command);
            let entry_id = chipledger_proto::entry_command_id(&batch_id, index);
            approvers.approve_and_attach(command, &fields, &entry_id, property, None).await?;
        }
    }
    Ok(())
}

/// Rules core alone: decide + evolve of every hand on fresh states, one thread.
pub struct CoreFigures {
    pub commands: u64,
    pub movements: u64,
    pub elapsed: Duration,
    pub passes: u32,
}

/// Runs passes over the hands until at least `min_time` has elapsed (conversion not timed).
pub fn rules_core(hands: &[HandHistory], min_time: Duration) -> anyhow::Result<CoreFigures> {
    let conversions = hands
        .iter()
        .map(|hand| chipledger_phh::convert(hand).with_context(|| format!("converting {}", hand.origin)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let commands = conversions.iter().map(|c| c.steps.len() as u64).sum::<u64>();
    let mut figures = CoreFigures { commands: 0, movements: 0, elapsed: Duration::ZERO, passes: 0 };
    let started = Instant::now();
    while figures.passes == 0 || started.elapsed() < min_time {
        for conversion in &conversions {
            let mut streams = Streams::default();
            let moved = run(conversion, &mut streams).map_err(|rejected| anyhow::anyhow!("{rejected}"))?;
            figures.movements += std::hint::black_box(moved) as u64;
        }
        figures.commands += commands;
        figures.passes += 1;
    }
    figures.elapsed = started.elapsed();
    Ok(figures)
}
