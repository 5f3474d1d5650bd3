//! The rules-core commands of a PHH replay as wire messages, and the one typed RPC that
//! carries each of them (live mode). Only the operations `chipledger_phh::convert` produces
//! are mapped; anything else is refused by name rather than guessed.

use anyhow::bail;
use chipledger_proto::v1 as pb;
use chipledger_proto::v1::cage_service_client::CageServiceClient;
use chipledger_proto::v1::command::Command as Wire;
use chipledger_proto::v1::table_service_client::TableServiceClient;
use chipledger_rules::{Action, CageOp, Command, FundsSource, PostKind, TableOp};
use chipledger_server::convert::{chips_to_wire, table_config_to_wire};
use tonic::transport::Channel;

/// `command` as a batch entry / RPC body with `header`.
pub fn to_wire(command: &Command, header: Option<pb::CommandHeader>) -> anyhow::Result<Wire> {
    let wire = match command {
        Command::Cage(cage) => match &cage.op {
            CageOp::OpenCage { denominations_cents, chips, cash_cents } => Wire::OpenCage(pb::OpenCage {
                header,
                cage_id: cage.cage_id.to_string(),
                denominations_cents: denominations_cents.clone(),
                chips: chips_to_wire(chips),
                cash_cents: *cash_cents,
            }),
            other => bail!("cage operation not used by the PHH replay: {other:?}"),
        },
        Command::Table(table) => {
            let table_id = table.table_id.to_string();
            match &table.op {
                TableOp::OpenTable { config } => Wire::OpenTable(pb::OpenTable {
                    header,
                    table_id,
                    configuration: Some(pb::open_table::Configuration::Config(table_config_to_wire(config))),
                }),
                TableOp::Fill { cage_id, slip_no, chips, signers } => Wire::Fill(pb::Fill {
                    header,
                    table_id,
                    cage_id: cage_id.to_string(),
                    slip_no: *slip_no,
                    chips: chips_to_wire(chips),
                    signer_1: signers.first.clone(),
                    signer_2: signers.second.clone(),
                }),
                TableOp::SeatPlayer { seat, player_id } => Wire::SeatPlayer(pb::SeatPlayer {
                    header,
                    table_id,
                    seat: u32::from(*seat),
                    player_id: player_id.to_string(),
                }),
                TableOp::BuyIn { seat, player_id, amount_cents, source, supervisor_id, short_buy } => {
                    Wire::BuyIn(pb::BuyIn {
                        header,
                        table_id,
                        seat: u32::from(*seat),
                        player_id: player_id.to_string(),
                        amount_cents: *amount_cents,
                        source: match source {
                            FundsSource::Cash => pb::FundsSource::Cash,
                            FundsSource::PocketChips => pb::FundsSource::PocketChips,
                        } as i32,
                        supervisor_id: supervisor_id.clone(),
                        short_buy: *short_buy,
                    })
                }
                TableOp::StartHand { hand_no, button_seat, dealt_seats } => Wire::StartHand(pb::StartHand {
                    header,
                    table_id,
                    hand_no: *hand_no,
                    button_seat: u32::from(*button_seat),
                    dealt_seats: dealt_seats.iter().map(|&seat| u32::from(seat)).collect(),
                }),
                TableOp::Post { seat, kind, amount_cents } => Wire::Post(pb::Post {
                    header,
                    table_id,
                    seat: u32::from(*seat),
                    kind: post_kind(*kind)? as i32,
                    amount_cents: *amount_cents,
                }),
                TableOp::Act { seat, action } => {
                    let (kind, to_cents) = match action {
                        Action::Fold => (pb::ActionKind::Fold, 0),
                        Action::Check => (pb::ActionKind::Check, 0),
                        Action::Call => (pb::ActionKind::Call, 0),
                        Action::Bet { to_cents } => (pb::ActionKind::Bet, *to_cents),
                        Action::Raise { to_cents } => (pb::ActionKind::Raise, *to_cents),
                        Action::Complete => (pb::ActionKind::Complete, 0),
                        Action::AllIn => (pb::ActionKind::AllIn, 0),
                    };
                    Wire::Act(pb::Act { header, table_id, seat: u32::from(*seat), kind: kind as i32, to_cents })
                }
                TableOp::NextRound { first_to_act_seat } => Wire::NextRound(pb::NextRound {
                    header,
                    table_id,
                    first_to_act_seat: first_to_act_seat.map(u32::from),
                }),
                TableOp::Showdown { high, low } => {
                    let groups = |groups: &[Vec<u8>]| -> Vec<pb::SeatGroup> {
                        groups
                            .iter()
                            .map(|group| pb::SeatGroup { seats: group.iter().map(|&seat| u32::from(seat)).collect() })
                            .collect()
                    };
                    Wire::Showdown(pb::Showdown {
                        header,
                        table_id,
                        high: groups(high),
                        low: low.as_deref().map(groups).unwrap_or_default(),
                        has_low: low.is_some(),
                    })
                }
                TableOp::EndHand => Wire::EndHand(pb::EndHand { header, table_id }),
                other => bail!("table operation not used by the PHH replay: {other:?}"),
            }
        }
        Command::Player(player) => bail!("player command not used by the PHH replay: {player:?}"),
    };
    Ok(wire)
}

fn post_kind(kind: PostKind) -> anyhow::Result<pb::PostKind> {
    Ok(match kind {
        PostKind::Ante => pb::PostKind::Ante,
        PostKind::ButtonAnte => pb::PostKind::ButtonAnte,
        PostKind::SmallBlind => pb::PostKind::SmallBlind,
        PostKind::BigBlind => pb::PostKind::BigBlind,
        PostKind::ThirdBlind => pb::PostKind::ThirdBlind,
        PostKind::Straddle => pb::PostKind::Straddle,
        PostKind::BringIn => pb::PostKind::BringIn,
        PostKind::Kill => pb::PostKind::Kill,
        PostKind::NewPlayer => pb::PostKind::NewPlayer,
        PostKind::MissedBigBlind => pb::PostKind::MissedBigBlind,
        PostKind::MissedSmallBlindDead => pb::PostKind::MissedSmallBlindDead,
    })
}

/// The typed clients one dealer device uses (one connection each).
#[derive(Clone)]
pub struct Clients {
    pub table: TableServiceClient<Channel>,
    pub cage: CageServiceClient<Channel>,
}

impl Clients {
    pub fn new(channel: Channel) -> Clients {
        Clients { table: TableServiceClient::new(channel.clone()), cage: CageServiceClient::new(channel) }
    }

    /// Sends `command` on its own typed RPC; returns the number of events appended.
    pub async fn send(&mut self, command: Wire) -> Result<usize, tonic::Status> {
        let result = match command {
            Wire::OpenCage(m) => self.cage.open_cage(m).await?,
            Wire::Fill(m) => self.cage.fill(m).await?,
            Wire::OpenTable(m) => self.table.open_table(m).await?,
            Wire::SeatPlayer(m) => self.table.seat_player(m).await?,
            Wire::BuyIn(m) => self.table.buy_in(m).await?,
            Wire::StartHand(m) => self.table.start_hand(m).await?,
            Wire::Post(m) => self.table.post(m).await?,
            Wire::Act(m) => self.table.act(m).await?,
            Wire::NextRound(m) => self.table.next_round(m).await?,
            Wire::Showdown(m) => self.table.showdown(m).await?,
            Wire::EndHand(m) => self.table.end_hand(m).await?,
            other => return Err(tonic::Status::unimplemented(format!("bench has no live RPC for {other:?}"))),
        };
        Ok(result.into_inner().events.len())
    }
}
