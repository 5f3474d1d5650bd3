//! `chipledger demo`: plays a realistic room session against a running `chipledgerd`, one RPC
//! per movement as the dealers' and cage terminals would send them, with a narration line for
//! each step:
//! - the cage opens; patrons cash in (one above the $10,000 CTR threshold, R-AUDIT-4);
//! - two tables of different games open (NLHE $1/$2 with rake and kitty, PLO $2/$5) and are
//!   filled from the cage (R-CHIP-3); patrons sit and buy in with cash, pocket chips or a
//!   marker (R-MARK-1);
//! - twelve hands, among them a three-way all-in with a side pot (R-POT-1, R-POT-2), raked
//!   hands (R-RAKE-1), kitty contributions (R-KITTY-1) and a split pot (R-POT-5);
//! - a tip, a color-up, a kitty expense, a credit, a top-up;
//! - a rathole attempt and an early re-buy, both refused with reason code, rule id and the
//!   numbers from `google.rpc.ErrorInfo` (R-STAKE-2, R-REBUY-1);
//! - cash-outs, redemptions at the cage, shift closes, the gaming-day close;
//! - then the reconciliation reports, cash activity and the verified chain digest.
//!
//! Ids carry a tag unique to the run (a UUID v4 prefix) so the demo can run again on the same
//! server; command ids are `demo-<run>-<n>`, deterministic within the run. Any unexpected
//! refusal stops the demo with its reason (nothing is faked). Needs an admin principal, and
//! three second persons for dual control (R-CHIP-3, R-MARK-1): a floor supervisor and a cage
//! cashier who sign the slips, a second admin who approves the credit line; each approves with
//! its own token (defaults: the development approvers of a bare `chipledgerd`).

use std::process::ExitCode;

use anyhow::{Context, bail};
use chipledger_proto::command_to_wire;
use chipledger_proto::v1 as pb;
use chipledger_rules::config::{KittyFrom, KittyPolicy};
use chipledger_rules::{
    Action, CageCommand, CageId, CageOp, ChipCount, Command, FundsSource, MarkerDelivery, PlayerCommand, PlayerId,
    PlayerOp, PostKind, Seat, Signers, TableCommand, TableConfig, TableId, TableOp,
};
use clap::Args;

use crate::approvals::{ApproverTokens, Approvers};
use crate::audit;
use crate::connect::{Client, Refusal, ServerArgs, describe_status, rpc_error};
use crate::output::{Output, money};
use crate::send::{Header, send_stamped, stamp};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Print every recorded event position, not only the narration.
    #[arg(long, short)]
    verbose: bool,
    #[command(flatten)]
    approvers: ApproverTokens,
}

/// The step named in an error: its narration, or the command itself.
fn step_text(kind: &str, narration: &str, command: &Command) -> String {
    if !narration.is_empty() {
        return format!("{kind} ({narration})");
    }
    match command {
        Command::Table(command) => format!("{kind} at {}: {:?}", command.table_id, command.op),
        Command::Cage(command) => format!("{kind} at {}: {:?}", command.cage_id, command.op),
        Command::Player(command) => format!("{kind} for {}: {:?}", command.player_id, command.op),
    }
}

/// A slip's two signers: the cage's and the floor's (R-CHIP-3).
const SIGNERS: &[&str] = &["signer_1", "signer_2"];

fn chips(list: &[(i64, i64)]) -> Vec<ChipCount> {
    list.iter().map(|&(denomination_cents, count)| ChipCount { denomination_cents, count }).collect()
}

/// A chip list worth exactly `amount_cents`, largest chips first (for redemptions).
fn chips_for(amount_cents: i64) -> Vec<ChipCount> {
    let mut rest = amount_cents;
    let mut list = Vec::new();
    for denomination in [10_000, 2_500, 500, 100] {
        let count = rest / denomination;
        if count > 0 {
            list.push(ChipCount { denomination_cents: denomination, count });
            rest -= count * denomination;
        }
    }
    list
}

/// One scripted hand: who posts, what each street's actions are, how it ends.
struct Hand<'a> {
    hand_no: u64,
    button: Seat,
    dealt: &'a [Seat],
    small_blind: (Seat, i64),
    big_blind: (Seat, i64),
    /// Further posts after the blinds, e.g. a returning player's live big blind (R-POST-3).
    extra_posts: &'a [(Seat, PostKind, i64)],
    /// Preflop first; a street after the first is dealt (NextRound) before its actions.
    streets: &'a [&'a [(Seat, Action)]],
    /// Seats best first (ties share a group); `None` when the last fold settled the hand.
    showdown: Option<Vec<Vec<Seat>>>,
    story: &'a str,
}

struct Demo {
    client: Client,
    approvers: Approvers,
    run: String,
    next_command: u32,
    verbose: bool,
    cage: CageId,
}

impl Demo {
    fn id(&self, name: &str) -> String {
        format!("{name}-{}", self.run)
    }

    fn table_id(&self, name: &str) -> anyhow::Result<TableId> {
        TableId::new(self.id(name)).map_err(|rejection| anyhow::anyhow!("table id: {}", rejection.detail))
    }

    fn player(&self, name: &str) -> anyhow::Result<PlayerId> {
        PlayerId::new(self.id(name)).map_err(|rejection| anyhow::anyhow!("player id: {}", rejection.detail))
    }

    fn header(&mut self) -> Header {
        self.next_command += 1;
        Header::new(format!("demo-{}-{}", self.run, self.next_command), &self.client.property_id)
    }

    /// Sends a command that must go through; a refusal stops the demo with its reason.
    async fn record(&mut self, narration: &str, command: Command) -> anyhow::Result<pb::CommandResult> {
        self.record_approved(narration, command, &[]).await
    }

    /// As [`Demo::record`], with `fields` (approver, signers) approved and named by the demo's
    /// second persons, each with their own token (dual control).
    async fn record_approved(
        &mut self,
        narration: &str,
        command: Command,
        fields: &[&'static str],
    ) -> anyhow::Result<pb::CommandResult> {
        let header = self.header();
        let mut wire = command_to_wire(&command)?;
        let kind = wire.message_name();
        stamp(&mut wire, &header);
        self.approvers.approve_and_attach(&mut wire, fields, &header.command_id, &header.property_id, None).await?;
        match send_stamped(&mut self.client, wire).await {
            Ok(result) => {
                if !narration.is_empty() {
                    println!("  {narration}");
                }
                if self.verbose {
                    for event in &result.events {
                        println!("      #{} {} {}", event.global_position, event.stream_id, event.event_type);
                    }
                }
                Ok(result)
            }
            Err(status) => bail!("demo step {} failed: {}", step_text(kind, narration, &command), describe_status(&status)),
        }
    }

    /// Sends a command that the rules must refuse; going through stops the demo.
    async fn refused(&mut self, narration: &str, command: Command) -> anyhow::Result<Refusal> {
        let header = self.header();
        let mut wire = command_to_wire(&command)?;
        let kind = wire.message_name();
        stamp(&mut wire, &header);
        match send_stamped(&mut self.client, wire).await {
            Ok(_) => bail!("demo step {kind} ({narration}) was accepted but must be refused"),
            Err(status) => match Refusal::from_status(&status) {
                Some(refusal) => {
                    println!("  {narration}");
                    println!("    REFUSED {} rule {}: {}", refusal.code, refusal.rule_id, refusal.detail);
                    println!("      numbers: {}", refusal.numbers_text());
                    Ok(refusal)
                }
                None => bail!("demo step {kind} ({narration}) failed: {}", describe_status(&status)),
            },
        }
    }

    fn table(table_id: &TableId, op: TableOp) -> Command {
        Command::Table(TableCommand { table_id: table_id.clone(), op })
    }

    fn cage_command(&self, op: CageOp) -> Command {
        Command::Cage(CageCommand { cage_id: self.cage.clone(), op })
    }

    async fn seat_and_buy_in(
        &mut self,
        table_id: &TableId,
        seat: Seat,
        player: &PlayerId,
        amount_cents: i64,
        source: FundsSource,
    ) -> anyhow::Result<()> {
        self.record("", Demo::table(table_id, TableOp::SeatPlayer { seat, player_id: player.clone() })).await?;
        let how = match source {
            FundsSource::Cash => "cash to the drop box, chips from the tray",
            FundsSource::PocketChips => "chips from the pocket",
        };
        let narration = format!("{player} sits at {table_id} seat {seat} and buys in for {} ({how})", money(amount_cents));
        let op = TableOp::BuyIn {
            seat,
            player_id: player.clone(),
            amount_cents,
            source,
            supervisor_id: None,
            short_buy: false,
        };
        self.record(&narration, Demo::table(table_id, op)).await?;
        Ok(())
    }

    async fn play(&mut self, table_id: &TableId, hand: Hand<'_>) -> anyhow::Result<pb::HandView> {
        println!("  hand {} at {table_id}: {}", hand.hand_no, hand.story);
        let start = TableOp::StartHand { hand_no: hand.hand_no, button_seat: hand.button, dealt_seats: hand.dealt.to_vec() };
        self.record("", Demo::table(table_id, start)).await?;
        for (kind, (seat, amount_cents)) in [(PostKind::SmallBlind, hand.small_blind), (PostKind::BigBlind, hand.big_blind)] {
            self.record("", Demo::table(table_id, TableOp::Post { seat, kind, amount_cents })).await?;
        }
        for &(seat, kind, amount_cents) in hand.extra_posts {
            let narration = format!("seat {seat} posts {} {}", crate::words::post_kind(kind), money(amount_cents));
            self.record(&narration, Demo::table(table_id, TableOp::Post { seat, kind, amount_cents })).await?;
        }
        for (index, street) in hand.streets.iter().enumerate() {
            if index > 0 {
                self.record("", Demo::table(table_id, TableOp::NextRound { first_to_act_seat: None })).await?;
            }
            for (seat, action) in street.iter() {
                self.record("", Demo::table(table_id, TableOp::Act { seat: *seat, action: *action })).await?;
            }
        }
        if let Some(high) = hand.showdown {
            self.record("", Demo::table(table_id, TableOp::Showdown { high, low: None, rake_cents: None })).await?;
        }
        self.record("", Demo::table(table_id, TableOp::EndHand)).await?;
        let view = self
            .client
            .table
            .get_hand(pb::GetHandRequest {
                property_id: self.client.property_id.clone(),
                table_id: table_id.to_string(),
                hand_no: Some(hand.hand_no),
            })
            .await
            .map_err(|status| rpc_error("reading the hand back", &status))?
            .into_inner();
        let pots: Vec<String> = view
            .pots
            .iter()
            .enumerate()
            .map(|(index, pot)| {
                let name = if index == 0 { "main".to_string() } else { format!("side {index}") };
                format!("{name} {}", money(pot.amount_cents))
            })
            .collect();
        let awards: Vec<String> =
            view.awards.iter().map(|award| format!("seat {} {}", award.seat, money(award.amount_cents))).collect();
        println!(
            "    pots: {}; awards: {}; rake {}",
            if pots.is_empty() { "-".to_string() } else { pots.join(", ") },
            awards.join(", "),
            money(view.rake_cents)
        );
        Ok(view)
    }

    async fn table_view(&mut self, table_id: &TableId) -> anyhow::Result<pb::TableView> {
        Ok(self
            .client
            .table
            .get_table(pb::GetTableRequest { property_id: self.client.property_id.clone(), table_id: table_id.to_string(), as_of: None })
            .await
            .map_err(|status| rpc_error("reading the table", &status))?
            .into_inner())
    }

    async fn stack(&mut self, table_id: &TableId, seat: Seat) -> anyhow::Result<i64> {
        let view = self.table_view(table_id).await?;
        Ok(view.seats.iter().find(|view| view.seat == u32::from(seat)).map_or(0, |view| view.stack_cents))
    }

    async fn pocket(&mut self, player: &PlayerId) -> anyhow::Result<i64> {
        Ok(self
            .client
            .ledger
            .get_balance(pb::GetBalanceRequest {
                property_id: self.client.property_id.clone(),
                account: format!("player/{player}/pocket"),
                as_of: None,
            })
            .await
            .map_err(|status| rpc_error("reading a pocket balance", &status))?
            .into_inner()
            .balance_cents)
    }

    /// Cashes every seated player out, then closes the shift with the honest counts.
    async fn close_table(&mut self, table_id: &TableId) -> anyhow::Result<()> {
        let view = self.table_view(table_id).await?;
        for seat in view.seats.iter().filter(|seat| !seat.player_id.is_empty()) {
            let player = PlayerId::new(seat.player_id.clone()).map_err(|r| anyhow::anyhow!("player id: {}", r.detail))?;
            let narration = format!("{player} cashes out {} from {table_id} seat {}", money(seat.stack_cents), seat.seat);
            let op = TableOp::CashOut { seat: seat.seat as Seat, player_id: player };
            self.record(&narration, Demo::table(table_id, op)).await?;
        }
        let view = self.table_view(table_id).await?;
        let tray: Vec<ChipCount> = view
            .tray
            .iter()
            .map(|chip| ChipCount { denomination_cents: chip.denomination_cents, count: chip.count })
            .collect();
        let tray_cents: i64 = tray.iter().map(|chip| chip.denomination_cents * chip.count).sum();
        let narration = format!(
            "the floor closes the shift at {table_id}: tray counted {}, drop counted {}",
            money(tray_cents),
            money(view.drop_cents)
        );
        // Counted and signed by two people, each with an approval of their own (R-CHIP-4).
        let signers = Signers { first: String::new(), second: String::new() };
        let op = TableOp::CloseShift { counted_tray: tray, counted_drop_cents: view.drop_cents, signers };
        self.record_approved(&narration, Demo::table(table_id, op), SIGNERS).await?;
        Ok(())
    }
}

/// The narration is plain text whatever `--json` says: it is a story, not a report.
pub async fn run(client: Client, server: &ServerArgs, args: DemoArgs, _output: Output) -> anyhow::Result<ExitCode> {
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let cage = CageId::new(format!("CAGE-{run}")).map_err(|r| anyhow::anyhow!("cage id: {}", r.detail))?;
    let approvers = Approvers::connect(server, &args.approvers.tokens(), 0).await.context("connecting the demo's approvers")?;
    let mut demo = Demo { client, approvers, run: run.clone(), next_command: 0, verbose: args.verbose, cage };
    println!("chipledger demo, run {run}, against {}", demo.client.server);
    session(&mut demo).await?;
    Ok(ExitCode::SUCCESS)
}

async fn session(demo: &mut Demo) -> anyhow::Result<()> {
    use Action::{AllIn, Bet, Call, Check, Fold, Raise};
    let cage_id = demo.cage.clone();
    let t1 = demo.table_id("T1")?;
    let t2 = demo.table_id("T2")?;
    let [alice, bob, carol, dan, dave, erin, frank] =
        ["alice", "bob", "carol", "dan", "dave", "erin", "frank"].map(|name| demo.player(name));
    let (alice, bob, carol, dan, dave, erin, frank) = (alice?, bob?, carol?, dan?, dave?, erin?, frank?);

    println!("== the cage opens ==");
    let stock = chips(&[(100, 5_000), (500, 4_000), (2_500, 2_000), (10_000, 1_000)]);
    // The narration's figures are the command's (it had said $1,565,000.00 of a $175,000.00 stock).
    let (stock_text, float_cents) = (crate::amount::money(stock.iter().map(|chip| chip.value_cents()).sum()), 5_000_000);
    let op = CageOp::OpenCage { denominations_cents: vec![100, 500, 2_500, 10_000], chips: stock, cash_cents: float_cents };
    let float_text = crate::amount::money(float_cents);
    demo.record(&format!("cage {cage_id} opens with ${stock_text} in chips and a ${float_text} float"), demo.cage_command(op)).await?;
    let op = CageOp::SellChips { player_id: alice.clone(), chips: chips(&[(2_500, 20)]), supervisor_id: None };
    demo.record(&format!("{alice} cashes in $500.00 at the cage (chips to her pocket)"), demo.cage_command(op)).await?;
    // The supervisor of a large sale approves and is named like the other second persons.
    let op = CageOp::SellChips { player_id: dave.clone(), chips: chips(&[(10_000, 120)]), supervisor_id: None };
    let text = format!("{dave} cashes in $12,000.00 (above the $10,000 CTR threshold, R-AUDIT-4; a supervisor approves, R-CHIP-2)");
    demo.record_approved(&text, demo.cage_command(op), &["supervisor_id"]).await?;
    // Approver fields are left empty: the second persons approve and are named (dual control).
    let op = PlayerOp::SetCreditLine { line_cents: 500_000, approved_by: String::new() };
    demo.record_approved(&format!("{erin} gets a $5,000.00 credit line, approved by a second admin with their own token"), Command::Player(PlayerCommand { player_id: erin.clone(), op }), &["approved_by"]).await?;
    let op = CageOp::IssueMarker {
        player_id: erin.clone(),
        marker_no: 1,
        chips: chips(&[(2_500, 16)]),
        approved_by: String::new(),
        delivery: MarkerDelivery::Pocket,
    };
    demo.record_approved(&format!("marker #1: {erin} draws $400.00 against her line, approved by the floor (R-MARK-1)"), demo.cage_command(op), &["approved_by"]).await?;

    println!("== two tables open and are filled ==");
    let mut nlhe = TableConfig::no_limit_holdem(100, 200);
    nlhe.kitty = Some(KittyPolicy { min_pot_cents: 2_000, leftover: Default::default(), from: KittyFrom::EachPot });
    demo.record(&format!("{t1} opens: {} (10% rake capped at $5, kitty on pots of $20+)", nlhe.game_key), Demo::table(&t1, TableOp::OpenTable { config: nlhe })).await?;
    let plo = TableConfig::pot_limit_omaha(200, 500);
    demo.record(&format!("{t2} opens: {}", plo.game_key), Demo::table(&t2, TableOp::OpenTable { config: plo })).await?;
    // Signed by the cage and the floor, each with an approval of its own (R-CHIP-3).
    let signers = Signers { first: String::new(), second: String::new() };
    for (table_id, slip_no) in [(&t1, 1), (&t2, 2)] {
        let fill = chips(&[(100, 500), (500, 400), (2_500, 200)]);
        let op = TableOp::Fill { cage_id: cage_id.clone(), slip_no, chips: fill, signers: signers.clone() };
        demo.record_approved(&format!("fill slip #{slip_no}: $7,500.00 from the cage to the tray of {table_id} (signed by the cage and the floor)"), Demo::table(table_id, op), SIGNERS).await?;
    }

    println!("== players sit down ==");
    demo.seat_and_buy_in(&t1, 1, &alice, 20_000, FundsSource::PocketChips).await?;
    demo.seat_and_buy_in(&t1, 2, &bob, 20_000, FundsSource::Cash).await?;
    demo.seat_and_buy_in(&t1, 3, &carol, 15_000, FundsSource::Cash).await?;
    demo.seat_and_buy_in(&t1, 4, &dan, 10_000, FundsSource::Cash).await?;
    demo.seat_and_buy_in(&t2, 1, &dave, 50_000, FundsSource::PocketChips).await?;
    demo.seat_and_buy_in(&t2, 2, &erin, 40_000, FundsSource::PocketChips).await?;
    demo.seat_and_buy_in(&t2, 3, &frank, 30_000, FundsSource::Cash).await?;

    println!("== hands at {t1} ==");
    let seats4: &[Seat] = &[1, 2, 3, 4];
    let view = demo
        .play(&t1, Hand {
            hand_no: 1,
            button: 4,
            dealt: seats4,
            small_blind: (1, 100),
            big_blind: (2, 200),
            extra_posts: &[],
            streets: &[&[(3, AllIn), (4, AllIn), (1, Call), (2, Fold)], &[], &[], &[]],
            showdown: Some(vec![vec![4], vec![1], vec![3]]),
            story: "carol all in for $150, dan all in for $100, alice calls: three-way all-in with a side pot",
        })
        .await?;
    if view.pots.len() < 2 {
        bail!("the three-way all-in should make a main pot and a side pot, the server shows {} pot(s)", view.pots.len());
    }
    let carol_left = demo.stack(&t1, 3).await?;
    if carol_left == 0 {
        let op = TableOp::TopUp { seat: 3, player_id: carol.clone(), amount_cents: 10_000, source: FundsSource::Cash, supervisor_id: None };
        demo.record(&format!("{carol} is felted and re-buys $100.00 with cash between hands"), Demo::table(&t1, op)).await?;
    }
    demo.play(&t1, Hand {
        hand_no: 2,
        button: 1,
        dealt: seats4,
        small_blind: (2, 100),
        big_blind: (3, 200),
        extra_posts: &[],
        streets: &[
            &[(4, Raise { to_cents: 600 }), (1, Call), (2, Fold), (3, Call)],
            &[(3, Check), (4, Bet { to_cents: 1_000 }), (1, Fold), (3, Call)],
            &[(3, Check), (4, Check)],
            &[(3, Bet { to_cents: 1_500 }), (4, Fold)],
        ],
        showdown: None,
        story: "dan raises, carol bets the river and dan folds (raked: the flop was seen)",
    })
    .await?;
    demo.play(&t1, Hand {
        hand_no: 3,
        button: 2,
        dealt: seats4,
        small_blind: (3, 100),
        big_blind: (4, 200),
        extra_posts: &[],
        streets: &[&[(1, Fold), (2, Fold), (3, Call), (4, Check)], &[(3, Check), (4, Check)], &[(3, Check), (4, Check)], &[(3, Check), (4, Check)]],
        showdown: Some(vec![vec![3], vec![4]]),
        story: "blinds check it down, carol's hand is best",
    })
    .await?;
    demo.play(&t1, Hand {
        hand_no: 4,
        button: 3,
        dealt: seats4,
        small_blind: (4, 100),
        big_blind: (1, 200),
        extra_posts: &[],
        streets: &[&[(2, Raise { to_cents: 500 }), (3, Fold), (4, Fold), (1, Fold)]],
        showdown: None,
        story: "bob raises and takes the blinds (no flop, no drop: no rake)",
    })
    .await?;
    demo.record(&format!("{bob} tips the dealer $1.00 (R-TIP-1)"), Demo::table(&t1, TableOp::Tip { seat: 2, amount_cents: 100 })).await?;
    let op = TableOp::ColorChange { seat: 4, give: chips(&[(500, 10)]), receive: chips(&[(2_500, 2)]) };
    demo.record(&format!("{dan} colors up ten $5 chips for two $25 chips (R-CHIP-1)"), Demo::table(&t1, op)).await?;

    println!("== refusals ==");
    let dan_stack = demo.stack(&t1, 4).await?;
    let rathole = demo
        .refused(
            &format!("{dan} tries to take $50.00 of his {} stack off the table", money(dan_stack)),
            Demo::table(&t1, TableOp::RemoveChips { seat: 4, amount_cents: 5_000, player_id: None }),
        )
        .await?;
    if rathole.code != "RATHOLING_FORBIDDEN" {
        bail!("the rathole attempt was refused with {} instead of RATHOLING_FORBIDDEN", rathole.code);
    }
    demo.record(&format!("{dan} cashes out {} and leaves {t1}", money(dan_stack)), Demo::table(&t1, TableOp::CashOut { seat: 4, player_id: dan.clone() })).await?;
    demo.record("", Demo::table(&t1, TableOp::SeatPlayer { seat: 4, player_id: dan.clone() })).await?;
    let op = TableOp::BuyIn { seat: 4, player_id: dan.clone(), amount_cents: 10_000, source: FundsSource::Cash, supervisor_id: None, short_buy: false };
    let rebuy = demo
        .refused(&format!("{dan} comes straight back to {t1} and tries to buy in for $100.00"), Demo::table(&t1, op))
        .await?;
    if rebuy.code != "REBUY_BELOW_AMOUNT_LEFT" {
        bail!("the early re-buy was refused with {} instead of REBUY_BELOW_AMOUNT_LEFT", rebuy.code);
    }
    let op = TableOp::BuyIn { seat: 4, player_id: dan.clone(), amount_cents: dan_stack, source: FundsSource::PocketChips, supervisor_id: None, short_buy: false };
    demo.record(&format!("{dan} buys back in for the {} he left with (allowed by R-REBUY-1)", money(dan_stack)), Demo::table(&t1, op)).await?;

    demo.play(&t1, Hand {
        hand_no: 5,
        button: 4,
        dealt: seats4,
        small_blind: (1, 100),
        big_blind: (2, 200),
        extra_posts: &[(4, PostKind::NewPlayer, 200)],
        streets: &[
            &[(3, Call), (4, Check), (1, Call), (2, Check)],
            &[(1, Check), (2, Bet { to_cents: 400 }), (3, Call), (4, Fold), (1, Fold)],
            &[(2, Check), (3, Check)],
            &[(2, Check), (3, Check)],
        ],
        showdown: Some(vec![vec![2], vec![3]]),
        story: "dan posts a live big blind to be dealt back in; bob bets the flop and wins at showdown",
    })
    .await?;
    demo.play(&t1, Hand {
        hand_no: 6,
        button: 1,
        dealt: seats4,
        small_blind: (2, 100),
        big_blind: (3, 200),
        extra_posts: &[],
        streets: &[&[(4, Fold), (1, Fold), (2, Call), (3, Check)], &[(2, Check), (3, Check)], &[(2, Check), (3, Check)], &[(2, Check), (3, Check)]],
        showdown: Some(vec![vec![3], vec![2]]),
        story: "blind against blind, checked down",
    })
    .await?;
    let kitty = demo.table_view(&t1).await?.kitty_cents;
    if kitty >= 100 {
        let op = TableOp::PayKittyExpense { amount_cents: 100, purpose: "fresh decks".into(), to_dealer: false };
        demo.record(&format!("the kitty ({}) pays $1.00 for fresh decks (R-KITTY-1)", money(kitty)), Demo::table(&t1, op)).await?;
    }

    println!("== hands at {t2} ==");
    let seats3: &[Seat] = &[1, 2, 3];
    demo.play(&t2, Hand {
        hand_no: 1,
        button: 3,
        dealt: seats3,
        small_blind: (1, 200),
        big_blind: (2, 500),
        extra_posts: &[],
        streets: &[
            &[(3, Call), (1, Call), (2, Check)],
            &[(1, Check), (2, Bet { to_cents: 1_000 }), (3, Call), (1, Fold)],
            &[(2, Check), (3, Check)],
            &[(2, Bet { to_cents: 2_000 }), (3, Fold)],
        ],
        showdown: None,
        story: "erin leads the flop and the river, frank folds",
    })
    .await?;
    demo.play(&t2, Hand {
        hand_no: 2,
        button: 1,
        dealt: seats3,
        small_blind: (2, 200),
        big_blind: (3, 500),
        extra_posts: &[],
        streets: &[&[(1, Raise { to_cents: 1_500 }), (2, Fold), (3, Call)], &[(3, Check), (1, Bet { to_cents: 2_000 }), (3, Fold)]],
        showdown: None,
        story: "dave raises on the button and takes it on the flop",
    })
    .await?;
    demo.play(&t2, Hand {
        hand_no: 3,
        button: 2,
        dealt: seats3,
        small_blind: (3, 200),
        big_blind: (1, 500),
        extra_posts: &[],
        streets: &[
            &[(2, Call), (3, Call), (1, Check)],
            &[(3, Check), (1, Check), (2, Check)],
            &[(3, Check), (1, Check), (2, Check)],
            &[(3, Check), (1, Check), (2, Check)],
        ],
        showdown: Some(vec![vec![1], vec![2], vec![3]]),
        story: "three-way check-down, dave wins",
    })
    .await?;
    demo.play(&t2, Hand {
        hand_no: 4,
        button: 3,
        dealt: seats3,
        small_blind: (1, 200),
        big_blind: (2, 500),
        extra_posts: &[],
        streets: &[&[(3, Fold), (1, Call), (2, Check)], &[(1, Check), (2, Check)], &[(1, Check), (2, Check)], &[(1, Check), (2, Check)]],
        showdown: Some(vec![vec![2], vec![1]]),
        story: "blinds check it down, erin wins",
    })
    .await?;
    demo.play(&t2, Hand {
        hand_no: 5,
        button: 1,
        dealt: seats3,
        small_blind: (2, 200),
        big_blind: (3, 500),
        extra_posts: &[],
        streets: &[&[(1, Fold), (2, Fold)]],
        showdown: None,
        story: "folded round to frank's big blind",
    })
    .await?;
    demo.play(&t2, Hand {
        hand_no: 6,
        button: 2,
        dealt: seats3,
        small_blind: (3, 200),
        big_blind: (1, 500),
        extra_posts: &[],
        streets: &[
            &[(2, Call), (3, Call), (1, Check)],
            &[(3, Check), (1, Check), (2, Check)],
            &[(3, Check), (1, Check), (2, Check)],
            &[(3, Check), (1, Check), (2, Check)],
        ],
        showdown: Some(vec![vec![1, 2], vec![3]]),
        story: "dave and erin split the pot (R-POT-5)",
    })
    .await?;

    println!("== the tables close ==");
    let credit = chips(&[(2_500, 40)]);
    let op = TableOp::Credit { cage_id: cage_id.clone(), slip_no: 1, chips: credit, signers: signers.clone() };
    demo.record_approved(&format!("credit slip #1: $1,000.00 from the tray of {t1} back to the cage"), Demo::table(&t1, op), SIGNERS).await?;
    demo.close_table(&t1).await?;
    demo.close_table(&t2).await?;

    println!("== the cage ==");
    for player in [&alice, &bob, &dave] {
        let pocket = demo.pocket(player).await?;
        if pocket > 0 {
            let op = CageOp::RedeemChips { player_id: (*player).clone(), chips: chips_for(pocket) };
            demo.record(&format!("{player} redeems {} of chips for cash", money(pocket)), demo.cage_command(op)).await?;
        }
    }
    let op = CageOp::RedeemMarker { player_id: erin.clone(), marker_no: 1, amount_cents: 40_000 };
    demo.record(&format!("{erin} pays marker #1 back in full"), demo.cage_command(op)).await?;
    let closed = demo.record("the cage closes the gaming day (chip liability per denomination, R-CHIP-5)", demo.cage_command(CageOp::CloseGamingDay)).await?;

    report(demo, &t1, &t2, &closed, &dave).await
}

/// The reconciliation of both shifts and the gaming day, the cash activity, the chain.
async fn report(demo: &mut Demo, t1: &TableId, t2: &TableId, closed: &pb::CommandResult, dave: &PlayerId) -> anyhow::Result<()> {
    let property_id = demo.client.property_id.clone();
    println!("== reconciliation ==");
    for table_id in [t1, t2] {
        let shift = demo
            .client
            .audit
            .table_shift_reconciliation(pb::TableShiftReconciliationRequest {
                property_id: property_id.clone(),
                table_id: table_id.to_string(),
                shift_close_position: None,
            })
            .await
            .map_err(|status| rpc_error("shift reconciliation", &status))?
            .into_inner();
        println!("reconciliation {}: {}", shift.table_id, audit::shift_formula(&shift));
    }
    // The gaming day the close was recorded under, from the event's metadata.
    let position = closed.events.first().map(|event| event.global_position).context("the day close recorded no event")?;
    let event = demo
        .client
        .ledger
        .list_events(pb::ListEventsRequest {
            property_id: property_id.clone(),
            filter: Some(pb::EventFilter { from_position: position, ..Default::default() }),
            page: Some(pb::PageRequest { page_size: 1, page_token: String::new() }),
        })
        .await
        .map_err(|status| rpc_error("reading the day close", &status))?
        .into_inner()
        .events
        .into_iter()
        .next()
        .context("the day close event is missing")?;
    let gaming_day = event.metadata.unwrap_or_default().gaming_day;
    let day = demo
        .client
        .audit
        .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: property_id.clone(), gaming_day: gaming_day.clone() })
        .await
        .map_err(|status| rpc_error("gaming-day reconciliation", &status))?
        .into_inner();
    println!(
        "gaming day {}: chip liability {}, sum of all balances {}",
        day.gaming_day,
        money(day.chip_liability_cents),
        money(day.sum_of_balances_cents)
    );

    println!("== cash activity of {dave} on {gaming_day} ==");
    let args = audit::CashActivityArgs::for_player(&gaming_day, dave.as_str());
    let patrons = audit::cash_activity(&mut demo.client, args, Output { json: false }).await?;
    for patron in &patrons {
        println!(
            "cash activity {}: in {} out {}, CTR required: in {} out {}",
            patron.player_id,
            money(patron.cash_in_cents),
            money(patron.cash_out_cents),
            patron.ctr_required_cash_in,
            patron.ctr_required_cash_out
        );
    }

    println!("== the chain ==");
    let verified = audit::verify_chain(&mut demo.client).await?;
    if !verified.ok {
        bail!("chain NOT verified: {}", verified.problem);
    }
    println!(
        "chain verified: {} events, digest position {} hash {}",
        verified.events_checked, verified.head.global_position, verified.head.chain_hash_hex
    );
    println!("demo finished: {} commands sent", demo.next_command);
    Ok(())
}
