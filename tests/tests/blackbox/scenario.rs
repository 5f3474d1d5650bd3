//! Building blocks shared by the scenarios: the cage, an NLHE $1/$2 table stocked by a fill,
//! seated players with cash buy-ins. Amounts are cents (R-UNIT-1).

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, approved, chips, header, principal};

pub const TABLE: &str = "T1";
pub const CAGE: &str = "MAIN";

/// Cage stock: $1 x 2000, $5 x 2000, $25 x 400, $100 x 100, $10,000 cash float.
pub async fn open_cage(cage: &mut Client) -> anyhow::Result<pb::CommandResult> {
    Ok(cage
        .cage
        .open_cage(pb::OpenCage {
            header: header("open-cage"),
            cage_id: CAGE.into(),
            denominations_cents: vec![100, 500, 2_500, 10_000],
            chips: vec![chips(100, 2_000), chips(500, 2_000), chips(2_500, 400), chips(10_000, 100)],
            cash_cents: 1_000_000,
        })
        .await?
        .into_inner())
}

/// NLHE $1/$2 from the preset: buy-in $40..$200 (R-STAKE-3), 10% rake capped at $5, no flop
/// no drop (R-RAKE-1), 60-minute re-buy wait (R-REBUY-1).
pub async fn open_nlhe_table(floor: &mut Client, table_id: &str) -> anyhow::Result<pb::CommandResult> {
    Ok(floor
        .table
        .open_table(pb::OpenTable {
            header: header(&format!("open-{table_id}")),
            table_id: table_id.into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 100,
                big_cents: 200,
                ..Default::default()
            })),
        })
        .await?
        .into_inner())
}

/// The opening fill, slip 1: $1 x 200 + $5 x 200 + $25 x 40 = 20,000 + 100,000 + 100,000
/// = 220,000 cents.
pub const OPENING_FILL_CENTS: i64 = 220_000;

/// Signed by the cage (the caller, `carl-cage`) and the floor (`fred-floor`, by approval: R-CHIP-3).
pub async fn opening_fill(cage: &mut Client, floor: &mut Client, table_id: &str, slip_no: u64) -> anyhow::Result<pb::CommandResult> {
    let fill = pb::Fill {
        header: header(&format!("fill-{table_id}-{slip_no}")),
        table_id: table_id.into(),
        cage_id: CAGE.into(),
        slip_no,
        chips: vec![chips(100, 200), chips(500, 200), chips(2_500, 40)],
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    let fill = approved(fill, &mut [floor]).await?;
    Ok(cage.cage.fill(fill).await?.into_inner())
}

pub async fn seat(dealer: &mut Client, table_id: &str, seat: u32, player_id: &str) -> anyhow::Result<pb::CommandResult> {
    Ok(dealer
        .table
        .seat_player(pb::SeatPlayer {
            header: header(&format!("seat-{table_id}-{seat}-{player_id}")),
            table_id: table_id.into(),
            seat,
            player_id: player_id.into(),
        })
        .await?
        .into_inner())
}

pub fn cash_buy_in(command_id: &str, table_id: &str, seat: u32, player_id: &str, amount_cents: i64) -> pb::BuyIn {
    pb::BuyIn {
        header: header(command_id),
        table_id: table_id.into(),
        seat,
        player_id: player_id.into(),
        amount_cents,
        source: pb::FundsSource::Cash as i32,
        supervisor_id: None,
        short_buy: false,
    }
}

/// Cage open, table open, opening fill: the common start of every table scenario.
pub async fn stocked_table(cage: &mut Client, floor: &mut Client, table_id: &str) -> anyhow::Result<()> {
    open_cage(cage).await?;
    open_nlhe_table(floor, table_id).await?;
    opening_fill(cage, floor, table_id, 1).await?;
    Ok(())
}

pub async fn table_view(client: &mut Client, table_id: &str) -> anyhow::Result<pb::TableView> {
    Ok(client
        .table
        .get_table(pb::GetTableRequest { property_id: String::new(), table_id: table_id.into(), as_of: None })
        .await?
        .into_inner())
}

/// Stack of a seat as the table view shows it (0 for an empty seat, R-STAKE-4).
pub fn stack(view: &pb::TableView, seat: u32) -> i64 {
    view.seats.iter().find(|s| s.seat == seat && !s.player_id.is_empty()).map_or(0, |s| s.stack_cents)
}

pub async fn balance(client: &mut Client, account: &str) -> anyhow::Result<i64> {
    Ok(client
        .ledger
        .get_balance(pb::GetBalanceRequest { account: account.into(), ..Default::default() })
        .await?
        .into_inner()
        .balance_cents)
}

pub fn act(command_id: &str, seat: u32, kind: pb::ActionKind, to_cents: i64) -> pb::Act {
    pb::Act { header: header(command_id), table_id: TABLE.into(), seat, kind: kind as i32, to_cents }
}

pub fn post(command_id: &str, seat: u32, kind: pb::PostKind, amount_cents: i64) -> pb::Post {
    pb::Post { header: header(command_id), table_id: TABLE.into(), seat, kind: kind as i32, amount_cents }
}

/// A command as sent, kept to be sent again unchanged (same id, same body): what a client does
/// with a command whose outcome it does not know.
#[derive(Clone, Debug)]
pub enum Sent {
    Tip(pb::Tip),
    BuyIn(pb::BuyIn),
    StartHand(pb::StartHand),
    Post(pb::Post),
    Act(pb::Act),
    EndHand(pb::EndHand),
}

impl Sent {
    pub fn command_id(&self) -> String {
        let header = match self {
            Sent::Tip(command) => &command.header,
            Sent::BuyIn(command) => &command.header,
            Sent::StartHand(command) => &command.header,
            Sent::Post(command) => &command.header,
            Sent::Act(command) => &command.header,
            Sent::EndHand(command) => &command.header,
        };
        header.as_ref().map(|h| h.command_id.clone()).unwrap_or_default()
    }

    pub async fn send(&self, client: &mut Client) -> Result<pb::CommandResult, tonic::Status> {
        let reply = match self.clone() {
            Sent::Tip(command) => client.table.tip(command).await,
            Sent::BuyIn(command) => client.table.buy_in(command).await,
            Sent::StartHand(command) => client.table.start_hand(command).await,
            Sent::Post(command) => client.table.post(command).await,
            Sent::Act(command) => client.table.act(command).await,
            Sent::EndHand(command) => client.table.end_hand(command).await,
        };
        reply.map(tonic::Response::into_inner)
    }
}
