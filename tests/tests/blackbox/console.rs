//! The back-office console in a real browser (headless Chromium driven through chromedriver):
//! chipledgerd serves its console beside gRPC, `chipledger demo` records a session, and the test
//! reads every page as a person would: the demo's stacks and pots on a hand page, the shift
//! result on the table page, the ratholing refusal (R-STAKE-2) on the compliance page, a live
//! update of the floor after a command sent over gRPC, a page refused to a role that may not see
//! it, and a cage form sent twice (and once more) recording one fill (R-CHIP-3).
//!
//! Screenshots of the main pages go to `$CHIPLEDGER_CONSOLE_SCREENSHOTS` (docs/console is made
//! this way), else to a temporary directory. Chromium and chromedriver are required: the test
//! fails without them (.ci/run installs Debian's `chromium` and `chromium-driver`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use chipledger_proto::v1 as pb;
use chipledger_tests::{ServerOptions, TestServer, all_events, principal};
use fantoccini::{Client as Browser, ClientBuilder, Locator};
use serde_json::json;
use sqlx::Connection;

use crate::scenario::cash_buy_in;

/// How long a page may take to show what is expected (the browser, the server, the database).
const PAGE_BOUND: Duration = Duration::from_secs(30);

fn money(cents: i64) -> String {
    let text = chipledger_rules::money::format_cents(cents.abs());
    if cents < 0 { format!("-${text}") } else { format!("${text}") }
}

/// chromedriver on a free loopback port, killed when dropped.
struct Driver {
    child: tokio::process::Child,
    url: String,
}

impl Driver {
    async fn start() -> anyhow::Result<Driver> {
        let program = ["chromedriver", "/usr/bin/chromedriver"]
            .into_iter()
            .find(|candidate| which(candidate))
            .context("chromedriver is not installed (Debian: apt-get install chromium chromium-driver)")?;
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
            probe.local_addr()?.port()
        };
        // In a process group of its own, so that the browsers it starts go with it (a failed
        // test does not leave Chromium running).
        let child = tokio::process::Command::new(program)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .context("starting chromedriver")?;
        let url = format!("http://127.0.0.1:{port}");
        // Ready when its status endpoint answers (bounded poll of a process starting up).
        let started = std::time::Instant::now();
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(Driver { child, url });
            }
            ensure!(started.elapsed() < PAGE_BOUND, "chromedriver did not listen on {port}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn browser(&self) -> anyhow::Result<Browser> {
        self.browser_with(&[]).await
    }

    async fn browser_with(&self, extra_args: &[&str]) -> anyhow::Result<Browser> {
        let chromium = ["chromium", "/usr/bin/chromium"].into_iter().find(|candidate| which(candidate)).context("chromium is not installed")?;
        let binary = if chromium.starts_with('/') { chromium.to_string() } else { format!("/usr/bin/{chromium}") };
        let mut args = vec!["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"];
        args.extend_from_slice(extra_args);
        let capabilities = json!({ "goog:chromeOptions": { "binary": binary, "args": args } });
        let capabilities = capabilities.as_object().cloned().context("capabilities")?;
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        Ok(ClientBuilder::new(connector).capabilities(capabilities).connect(&self.url).await.context("a WebDriver session")?)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) {
            // SAFETY: kill(2) on the process group chromedriver leads; no memory is involved.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.child.start_kill();
    }
}

fn which(program: &str) -> bool {
    if program.starts_with('/') {
        return Path::new(program).exists();
    }
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).exists()))
}

/// One browser signed in as one principal.
struct Person {
    browser: Browser,
    base: String,
    shots: PathBuf,
}

impl Person {
    async fn sign_in(driver: &Driver, base: &str, token: &str, shots: &Path) -> anyhow::Result<Person> {
        Person::sign_in_with(driver.browser().await?, base, token, shots).await
    }

    async fn sign_in_with(browser: Browser, base: &str, token: &str, shots: &Path) -> anyhow::Result<Person> {
        browser.goto(&format!("{base}/signin")).await?;
        let field = match browser.wait().at_most(PAGE_BOUND).for_element(Locator::Css("input[name=token]")).await {
            Ok(field) => field,
            Err(error) => {
                // Chromium's own error page names its net error (ERR_...): say which.
                let shown = browser.find(Locator::Css("body")).await?.text().await.unwrap_or_default();
                bail!("no sign-in form at {base}/signin ({error}); the browser shows: {}", shown.chars().take(600).collect::<String>());
            }
        };
        field.send_keys(token).await?;
        browser.find(Locator::XPath("//button[text()='Sign in']")).await?.click().await?;
        browser.wait().at_most(PAGE_BOUND).for_element(Locator::Css("h1")).await?;
        let person = Person { browser, base: base.to_string(), shots: shots.to_path_buf() };
        ensure!(person.text("header .who").await?.contains(" ("), "signed in: the header names who");
        Ok(person)
    }

    async fn open(&self, path: &str) -> anyhow::Result<()> {
        self.browser.goto(&format!("{}{path}", self.base)).await?;
        self.browser.wait().at_most(PAGE_BOUND).for_element(Locator::Css("h1")).await?;
        Ok(())
    }

    async fn text(&self, css: &str) -> anyhow::Result<String> {
        Ok(self.browser.find(Locator::Css(css)).await?.text().await?)
    }

    async fn page_text(&self) -> anyhow::Result<String> {
        self.text("main").await
    }

    /// The text of the list section `name` (all of its rows on the page).
    async fn list(&self, name: &str) -> anyhow::Result<String> {
        self.text(&format!("#list-{name}")).await
    }

    async fn screenshot(&self, name: &str) -> anyhow::Result<()> {
        let png = self.browser.screenshot().await?;
        ensure!(png.starts_with(b"\x89PNG"), "a PNG screenshot of {name}");
        std::fs::write(self.shots.join(format!("{name}.png")), png)?;
        Ok(())
    }
}

/// `chipledger demo` against the server, as its admin with the demo's second persons.
async fn record_demo(server: &TestServer) -> anyhow::Result<String> {
    let binary = chipledger_tests::binary::chipledger().await?;
    let output = tokio::process::Command::new(binary)
        .arg("demo")
        .env("CHIPLEDGER_SERVER", format!("http://{}", server.addr))
        .env("CHIPLEDGER_TOKEN", principal::ADMIN.2)
        .env("CHIPLEDGER_FLOOR_TOKEN", principal::FLOOR.2)
        .env("CHIPLEDGER_CAGE_TOKEN", principal::CAGE.2)
        .env("CHIPLEDGER_CREDIT_TOKEN", principal::ADMIN_2.2)
        .stdin(Stdio::null())
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!("the demo failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(stdout)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_console_shows_the_ledger_to_the_floor_the_cage_and_the_auditor() -> anyhow::Result<()> {
    let server = TestServer::start_with("console", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
    let base = format!("http://{}", server.console_addr.context("the console listens")?);
    record_demo(&server).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let shots_dir = std::env::var_os("CHIPLEDGER_CONSOLE_SCREENSHOTS").map(PathBuf::from);
    let temporary = tempfile::tempdir()?;
    let shots = shots_dir.unwrap_or_else(|| temporary.path().to_path_buf());
    std::fs::create_dir_all(&shots)?;
    let driver = Driver::start().await?;

    // What the ledger says, over gRPC: the demo's tables, a shift close, a hand with side pots.
    let opened = all_events(&mut admin, pb::EventFilter { event_types: vec!["TableOpened".into()], ..Default::default() }).await?;
    let tables: Vec<String> =
        opened.iter().map(|event| event.stream_id.trim_start_matches("table-").to_string()).collect();
    ensure!(tables.len() == 2, "the demo opens two tables: {tables:?}");
    let t1 = tables.iter().find(|id| id.starts_with("T1-")).context("T1")?.clone();
    let shift = admin
        .audit
        .table_shift_reconciliation(pb::TableShiftReconciliationRequest { table_id: t1.clone(), ..Default::default() })
        .await?
        .into_inner();
    let (mut side_pot_hand, mut uncalled_hand) = (None, None);
    let started = all_events(&mut admin, pb::EventFilter { table_id: t1.clone(), event_types: vec!["HandStarted".into()], ..Default::default() }).await?;
    for event in &started {
        let chipledger_rules::TableEvent::HandStarted { hand_no, .. } = serde_json::from_str(&event.payload_json)? else {
            bail!("a HandStarted event: {}", event.payload_json);
        };
        let hand = admin
            .table
            .get_hand(pb::GetHandRequest { table_id: t1.clone(), hand_no: Some(hand_no), ..Default::default() })
            .await?
            .into_inner();
        // R-POT-4: a bet nobody called goes back to its bettor (a layer only its bettor reached).
        if uncalled_hand.is_none() && hand.pots.iter().any(|pot| pot.returned_cents > 0) {
            uncalled_hand = Some(hand.clone());
        }
        if side_pot_hand.is_none() && hand.pots.iter().filter(|pot| pot.returned_cents < pot.amount_cents).count() >= 2 {
            side_pot_hand = Some(hand);
        }
        if side_pot_hand.is_some() && uncalled_hand.is_some() {
            break;
        }
    }
    let hand = side_pot_hand.context("the demo plays a three-way all-in with a side pot (R-POT-1)")?;
    let uncalled = uncalled_hand.context("the demo plays a hand whose last bet is not called (R-POT-4)")?;
    let rathole = admin
        .audit
        .list_rejections(pb::ListRejectionsRequest { reason_code: "RATHOLING_FORBIDDEN".into(), ..Default::default() })
        .await?
        .into_inner();
    ensure!(rathole.rejections.len() == 1, "the demo's rathole attempt is refused once");
    let rathole = &rathole.rejections[0];

    // The auditor: compliance shows the ratholing refusal with its rule and numbers; the chain
    // verifies from the console.
    let auditor = Person::sign_in(&driver, &base, principal::AUDITOR.2, &shots).await?;
    auditor.open("/compliance").await?;
    let refusals = auditor.list("refusals").await?;
    ensure!(
        refusals.contains("RATHOLING_FORBIDDEN") && refusals.contains("R-STAKE-2") && refusals.contains(&rathole.player_id),
        "the compliance page lists the ratholing refusal: {refusals}"
    );
    let counts = auditor.list("refusal_counts").await?;
    ensure!(counts.contains("RATHOLING_FORBIDDEN") && counts.contains("R-REBUY-1"), "refusals counted by reason: {counts}");
    let totals = auditor.list("patron_totals").await?;
    ensure!(totals.contains("Taken back in") && totals.contains("MTL entries"), "the patrons' day totals with what corrections took back: {totals}");
    let ctr = auditor.list("ctr").await?;
    ensure!(ctr.contains("cash in") && ctr.contains("cash out"), "the demo's CTR patron: {ctr}");
    auditor.screenshot("compliance").await?;
    auditor.open("/chain").await?;
    auditor.browser.find(Locator::Id("verify")).await?.click().await?;
    let verdict = auditor.browser.wait().at_most(PAGE_BOUND).for_element(Locator::Id("verdict")).await?.text().await?;
    ensure!(verdict == "verified", "the chain verifies from the console: {verdict}");
    let head = admin.audit.get_chain_digest(pb::GetChainDigestRequest::default()).await?.into_inner();
    ensure!(auditor.text("#head-position").await? == head.global_position.to_string(), "the chain page shows the head");
    auditor.screenshot("chain").await?;
    // A projection row edited behind the service: the chains still verify; the page says the
    // projections differ and names the row (the console pass: it said BROKEN and named nothing).
    let mut superuser = sqlx::PgConnection::connect(&server.database_url).await?;
    let edited: String = sqlx::query_scalar(
        "UPDATE account_balances SET balance_cents = balance_cents + 1000000 WHERE property = $1 AND account = \
         (SELECT min(account) FROM account_balances WHERE property = $1 AND account LIKE 'table/%/seat/%') RETURNING account",
    )
    .bind(&server.property_id)
    .fetch_one(&mut superuser)
    .await?;
    auditor.browser.find(Locator::Id("verify")).await?.click().await?;
    let verdict = auditor.browser.wait().at_most(PAGE_BOUND).for_element(Locator::Css("dd#verdict.problem")).await?.text().await?;
    ensure!(verdict.starts_with("chain verified; PROJECTIONS DIFFER"), "a projection row is not a broken chain: {verdict}");
    let rows = auditor.text("#differences").await?;
    ensure!(rows.contains("account_balances") && rows.contains(&edited), "the page names the row {edited}: {rows}");
    sqlx::query("UPDATE account_balances SET balance_cents = balance_cents - 1000000 WHERE property = $1 AND account = $2")
        .bind(&server.property_id)
        .bind(&edited)
        .execute(&mut superuser)
        .await?;

    // A dealer may not see compliance: refused, and the navigation does not offer it.
    let dealer = Person::sign_in(&driver, &base, principal::DEALER.2, &shots).await?;
    dealer.open("/compliance").await?;
    ensure!(dealer.text("h1").await?.contains("may not see this page"), "the dealer is refused compliance");
    ensure!(dealer.page_text().await?.contains("ROLE_NOT_PERMITTED"), "the refusal names its reason");
    ensure!(!dealer.text("nav").await?.contains("Compliance"), "no compliance link for a dealer");
    dealer.browser.close().await?;

    // The floor supervisor (the admin here): the table's shift result, the hand's stacks and pots.
    let floor = Person::sign_in(&driver, &base, principal::ADMIN.2, &shots).await?;
    floor.open(&format!("/tables/{t1}")).await?;
    ensure!(
        floor.text(".shift .result").await? == money(shift.result_cents),
        "the table page shows the shift result {}",
        money(shift.result_cents)
    );
    let slips = floor.list("slips").await?;
    ensure!(slips.contains("fill") && slips.contains(principal::CAGE.0), "fills with their signers: {slips}");
    floor.screenshot("table").await?;
    floor.open(&format!("/tables/{t1}/hands/{}", hand.hand_no)).await?;
    let page = floor.page_text().await?;
    for seat in &hand.starting_seats {
        ensure!(page.contains(&money(seat.stack_cents)), "the hand page shows seat {}'s stack {}", seat.seat, money(seat.stack_cents));
    }
    for pot in &hand.pots {
        ensure!(page.contains(&money(pot.amount_cents)), "the hand page shows the pot of {}", money(pot.amount_cents));
    }
    ensure!(page.contains("Side pot 1") || page.contains("side pot 1"), "a side pot is drawn");
    for award in &hand.awards {
        let won = award.amount_cents - hand.pots[award.pot_index as usize].returned_cents.min(award.amount_cents);
        ensure!(page.contains(&money(won)), "the award of {}", money(won));
    }
    floor.screenshot("hand").await?;
    // R-POT-4: an uncalled bet is listed as returned, not as a pot won (it had read as a side pot
    // awarded to its bettor).
    floor.open(&format!("/tables/{t1}/hands/{}", uncalled.hand_no)).await?;
    let page = floor.page_text().await?;
    if uncalled.pots.iter().any(|pot| pot.returned_cents == pot.amount_cents) {
        ensure!(page.contains("uncalled bet, returned"), "the hand page names the uncalled bet: {page}");
    }
    let awards = floor.text("#awards").await?;
    for award in &uncalled.awards {
        let returned = uncalled.pots[award.pot_index as usize].returned_cents.min(award.amount_cents);
        let row = format!("{} {}", money(award.amount_cents - returned), money(returned));
        ensure!(
            awards.lines().any(|line| line.trim_end().ends_with(&row)),
            "seat {} won {} and had {} returned (award {}): {awards}",
            award.seat,
            money(award.amount_cents - returned),
            money(returned),
            money(award.amount_cents)
        );
    }
    floor.open(&format!("/players/{}", rathole.player_id)).await?;
    ensure!(floor.list("sessions").await?.contains(&t1), "the player's sessions");
    floor.screenshot("player").await?;
    floor.open("/cage").await?;
    ensure!(floor.text("#liability").await?.starts_with('$'), "the cage page shows the chip liability");
    floor.screenshot("cage").await?;

    // Live: a buy-in sent over gRPC appears on the open floor page without a reload.
    floor.open("/").await?;
    floor.browser.execute("window.stayedOnPage = 42; return true;", vec![]).await?;
    let live_player = "live-walk-in";
    let mut dealer_client = server.client(principal::DEALER).await?;
    dealer_client.table.buy_in(cash_buy_in("console-live-1", &t1, 1, live_player, 10_000)).await?;
    let row = format!("//article[@id='table-{t1}']//tr[td/a[text()='{live_player}']]/td[contains(@class,'stack')]");
    let stack = floor.browser.wait().at_most(PAGE_BOUND).for_element(Locator::XPath(&row)).await?.text().await?;
    ensure!(stack == money(10_000), "the floor shows the new stack live: {stack}");
    let stayed = floor.browser.execute("return window.stayedOnPage === 42;", vec![]).await?;
    ensure!(stayed == json!(true), "the floor updated in place, not by a reload");
    floor.screenshot("floor").await?;
    floor.browser.close().await?;

    // The demo closed its cage's gaming day: that cage moves nothing more dated it (R-CHIP-5).
    // The fills below come from a second cage, ANNEX, first in the forms' list.
    let mut cashier = server.client(principal::CAGE).await?;
    cashier
        .cage
        .open_cage(pb::OpenCage {
            header: chipledger_tests::header("open-cage-annex"),
            cage_id: "ANNEX".into(),
            denominations_cents: vec![100, 500, 2_500, 10_000],
            chips: vec![chipledger_tests::chips(2_500, 400)],
            cash_cents: 1_000_000,
        })
        .await?;
    // The cage: one fill form sent twice at once (a double click) and once more by the browser:
    // one fill recorded (R-CHIP-3: the floor supervisor signs with their own token).
    let cage = Person::sign_in(&driver, &base, principal::CAGE.2, &shots).await?;
    cage.open("/cage").await?;
    let before = all_events(&mut admin, pb::EventFilter { event_types: vec!["FillReceived".into()], ..Default::default() }).await?.len();
    let form = Locator::Id("form-fill");
    let fill = cage.browser.find(form).await?;
    let chosen = fill.find(Locator::Css("select[name=cage_id]")).await?.prop("value").await?;
    ensure!(chosen.as_deref() == Some("ANNEX"), "the fill form starts at the first cage, ANNEX: {chosen:?}");
    fill.find(Locator::Css("input[name=table_id]")).await?.send_keys(&t1).await?;
    fill.find(Locator::Css("input[name=chip_2500]")).await?.send_keys("4").await?;
    fill.find(Locator::Css("input[name=second_token]")).await?.send_keys(principal::FLOOR.2).await?;
    let answers = cage
        .browser
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const form = document.getElementById('form-fill');
             const send = () => fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)) })
               .then(r => r.text().then(t => r.status + ' ' + (document.createRange().createContextualFragment(t).querySelector('#outcome') || {textContent: t}).textContent));
             Promise.all([send(), send()]).then(done, e => done('failed ' + e));",
            vec![],
        )
        .await?;
    let answers: Vec<String> = serde_json::from_value(answers)?;
    ensure!(answers.iter().all(|answer| answer.starts_with("200 ")), "both submissions answered: {answers:?}");
    fill.find(Locator::Css("button")).await?.click().await?;
    let outcome = cage.browser.wait().at_most(PAGE_BOUND).for_element(Locator::Id("outcome")).await?.text().await?;
    ensure!(outcome.starts_with("Already recorded"), "the third submission is recognised: {outcome}");
    let fills = all_events(&mut admin, pb::EventFilter { event_types: vec!["FillReceived".into()], ..Default::default() }).await?;
    ensure!(fills.len() == before + 1, "one fill recorded for three submissions ({} before, {} after)", before, fills.len());
    let recorded = fills.last().context("the fill")?;
    let metadata = recorded.metadata.as_ref().context("metadata")?;
    ensure!(metadata.actor_id == principal::CAGE.0 && metadata.device == Some("console".to_string()), "recorded as the cashier from the console");
    ensure!(recorded.payload_json.contains(principal::FLOOR.0), "the floor supervisor signed: {}", recorded.payload_json);

    // A slip out of sequence (R-CHIP-3) is refused with its reason, rule and numbers, and moves
    // nothing.
    cage.open("/cage").await?;
    let fill = cage.browser.find(Locator::Id("form-fill")).await?;
    fill.find(Locator::Css("input[name=table_id]")).await?.send_keys(&t1).await?;
    let slip = fill.find(Locator::Css("input[name=slip_no]")).await?;
    slip.clear().await?;
    slip.send_keys("999").await?;
    fill.find(Locator::Css("input[name=chip_2500]")).await?.send_keys("4").await?;
    fill.find(Locator::Css("input[name=second_token]")).await?.send_keys(principal::FLOOR.2).await?;
    fill.find(Locator::Css("button")).await?.click().await?;
    cage.browser.wait().at_most(PAGE_BOUND).for_element(Locator::Css("p.problem")).await?;
    let refused = cage.page_text().await?;
    ensure!(
        refused.contains("SLIP_OUT_OF_SEQUENCE") && refused.contains("R-CHIP-3") && refused.contains("999"),
        "the refusal names its reason, rule and numbers: {refused}"
    );
    let after = all_events(&mut admin, pb::EventFilter { event_types: vec!["FillReceived".into()], ..Default::default() }).await?.len();
    ensure!(after == before + 1, "the refused fill moved nothing");
    cage.browser.close().await?;
    auditor.browser.close().await?;
    server.stop().await
}

/// Under `[tls]` the console is HTTPS with the server's identity, and the session cookie is
/// Secure as well as HttpOnly and SameSite=Strict.
#[tokio::test(flavor = "multi_thread")]
async fn under_tls_the_console_is_https_and_its_cookie_secure() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ca = chipledger_tests::certs::Authority::new("chipledger console test CA")?;
    let server_pem = ca.server()?;
    let tls = chipledger_server::config::TlsFile {
        cert: chipledger_tests::write_file(dir.path(), "server.pem", &server_pem.cert)?,
        key: chipledger_tests::write_file(dir.path(), "server.key", &server_pem.key)?,
        client_ca: None,
        client_auth_optional: false,
    };
    let options = ServerOptions { tls: Some(tls), console: true, ..ServerOptions::default() };
    let client_tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(ca.cert_pem()))
        .domain_name("localhost");
    let server = TestServer::start_with("console-tls", options, Some(client_tls.clone())).await?;
    chipledger_tests::wait_until_serving(&format!("https://{}", server.addr), Some(client_tls)).await?;
    // The address itself, not "localhost": that name may reach another listener on ::1 (a
    // container's published port) while the console listens on 127.0.0.1.
    let base = format!("https://{}", server.console_addr.context("the console listens")?);
    let driver = Driver::start().await?;
    // The test's CA is not in the browser's store (and the certificate names localhost): it is
    // accepted for this run only.
    let browser = driver.browser_with(&["--ignore-certificate-errors"]).await?;
    let shots = tempfile::tempdir()?;
    let auditor = Person::sign_in_with(browser, &base, principal::AUDITOR.2, shots.path()).await?;
    ensure!(auditor.browser.current_url().await?.scheme() == "https", "served over TLS");
    let cookie = auditor.browser.get_named_cookie("chipledger_session").await?;
    ensure!(cookie.secure() == Some(true), "the session cookie is Secure: {cookie:?}");
    ensure!(cookie.http_only() == Some(true), "the session cookie is HttpOnly: {cookie:?}");
    ensure!(format!("{:?}", cookie.same_site()) == "Some(Strict)", "the session cookie is SameSite=Strict: {cookie:?}");
    auditor.open("/compliance").await?;
    ensure!(auditor.text("h1").await? == "Compliance", "the auditor reads compliance over TLS");
    auditor.browser.close().await?;
    server.stop().await
}

/// Plain HTTP against the console, as a hostile client would send it: no browser, forged or
/// missing cookies and tokens.
mod hostile {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client as HttpClient;
    use hyper_util::rt::TokioExecutor;

    type Http = HttpClient<hyper_util::client::legacy::connect::HttpConnector, Full<bytes::Bytes>>;

    struct Answer {
        status: u16,
        location: String,
        cookies: Vec<String>,
        body: String,
    }

    async fn send(http: &Http, method: &str, url: &str, cookie: &str, form: &str) -> anyhow::Result<Answer> {
        let mut request = http::Request::builder().method(method).uri(url);
        if !cookie.is_empty() {
            request = request.header(http::header::COOKIE, cookie);
        }
        if method == "POST" {
            request = request.header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        let response = http.request(request.body(Full::new(bytes::Bytes::from(form.to_string())))?).await?;
        let status = response.status().as_u16();
        let header = |name: http::header::HeaderName| {
            response.headers().get_all(name).iter().filter_map(|value| value.to_str().ok().map(str::to_owned)).collect::<Vec<_>>()
        };
        let location = header(http::header::LOCATION).into_iter().next().unwrap_or_default();
        let cookies = header(http::header::SET_COOKIE);
        let body = String::from_utf8_lossy(&response.into_body().collect().await?.to_bytes()).into_owned();
        Ok(Answer { status, location, cookies, body })
    }

    fn value_of<'a>(text: &'a str, name: &str) -> Option<&'a str> {
        let start = text.find(&format!("name=\"{name}\" value=\""))? + name.len() + 15;
        text[start..].split('"').next()
    }

    fn session_cookie(answer: &Answer, name: &str) -> Option<String> {
        answer.cookies.iter().find(|cookie| cookie.starts_with(&format!("{name}="))).map(|cookie| cookie.split(';').next().unwrap_or_default().to_string())
    }

    /// The sign-in form fetched and posted with `token`: the answer to the post.
    async fn sign_in(http: &Http, base: &str, token: &str) -> anyhow::Result<Answer> {
        let page = send(http, "GET", &format!("{base}/signin"), "", "").await?;
        let signin_cookie = session_cookie(&page, "chipledger_signin").context("the sign-in cookie")?;
        let signin_csrf = value_of(&page.body, "signin_csrf").context("the sign-in form token")?.to_string();
        send(http, "POST", &format!("{base}/signin"), &signin_cookie, &format!("signin_csrf={signin_csrf}&token={token}")).await
    }

    const CASINO_B: &str = "casino-b";
    const BOB: (&str, &str, &str) = ("bob-floor", "floor_supervisor", "bob-token-0123456789");

    /// Property B beside the default one: the floor supervisor serves both, Bob serves B only.
    fn two_properties(file: &mut chipledger_server::config::FileConfig) {
        file.properties.push(chipledger_server::config::PropertyFile { id: CASINO_B.into(), ..Default::default() });
        for entry in &mut file.auth.principals {
            if entry.id == principal::FLOOR.0 {
                entry.properties = vec!["*".into()];
            }
        }
        file.auth.principals.push(chipledger_server::config::PrincipalFile {
            id: BOB.0.into(),
            role: BOB.1.into(),
            cert_names: Vec::new(),
            tokens: vec![BOB.2.into()],
            properties: vec![CASINO_B.into()],
        });
    }

    /// A principal of another property than the default sees that property's pages, and one of
    /// several chooses among them (the console pass: every page asked the default property, so
    /// Bob was refused everything and the floor could never see property B).
    #[tokio::test(flavor = "multi_thread")]
    async fn each_principal_sees_its_own_property_and_one_of_several_chooses() -> anyhow::Result<()> {
        let options = ServerOptions { console: true, customize: Some(two_properties), ..ServerOptions::default() };
        let server = TestServer::start_with("console-properties", options, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let mut floor = server.client(principal::FLOOR).await?;
        let preset = Some(pb::open_table::Configuration::Preset(pb::TablePreset {
            game: pb::GamePreset::NoLimitHoldem as i32,
            small_cents: 100,
            big_cents: 200,
            ..Default::default()
        }));
        let header = Some(pb::CommandHeader { command_id: "open-TB".into(), property_id: CASINO_B.into(), ..Default::default() });
        floor.table.open_table(pb::OpenTable { header, table_id: "TB".into(), configuration: preset }).await?;
        // Bob: his one property's pages.
        let bob = session_cookie(&sign_in(&http, &base, BOB.2).await?, "chipledger_session").context("Bob's session")?;
        let page = send(&http, "GET", &format!("{base}/tables/TB"), &bob, "").await?;
        ensure!(page.status == 200 && page.body.contains("TB"), "Bob reads B's table: {} {}", page.status, page.body);
        let csrf = value_of(&page.body, "csrf").context("Bob's CSRF token")?.to_string();
        let other = send(&http, "POST", &format!("{base}/property"), &bob, &format!("csrf={csrf}&property=default")).await?;
        ensure!(other.status == 403 && other.body.contains("PROPERTY_NOT_PERMITTED"), "Bob may not act in the default property: {} {}", other.status, other.body);
        // The floor of both: the default first, then B once chosen; a property unknown is refused.
        let flo = session_cookie(&sign_in(&http, &base, principal::FLOOR.2).await?, "chipledger_session").context("the floor's session")?;
        let page = send(&http, "GET", &format!("{base}/tables/TB"), &flo, "").await?;
        ensure!(page.status == 404, "TB is not a table of the default property: {}", page.status);
        ensure!(page.body.contains(&format!("<option value=\"{CASINO_B}\"")), "the header offers B: {}", page.body);
        let csrf = value_of(&page.body, "csrf").context("the floor's CSRF token")?.to_string();
        let unknown = send(&http, "POST", &format!("{base}/property"), &flo, &format!("csrf={csrf}&property=nowhere")).await?;
        ensure!(unknown.status == 404, "an unknown property: {} {}", unknown.status, unknown.body);
        let chosen = send(&http, "POST", &format!("{base}/property"), &flo, &format!("csrf={csrf}&property={CASINO_B}")).await?;
        ensure!(chosen.status == 303, "B chosen: {} {}", chosen.status, chosen.body);
        let page = send(&http, "GET", &format!("{base}/tables/TB"), &flo, "").await?;
        ensure!(page.status == 200 && page.body.contains("TB"), "the floor reads B's table once B is chosen: {} {}", page.status, page.body);
        // A cage form drawn while the session acted in the default property is refused once
        // it acts in B (the console pass: a fill drawn in one tab was recorded in the property
        // another tab had switched to).
        let stale = fill_form(&server.property_id, 9, principal::CAGE.2);
        let answer = send(&http, "POST", &format!("{base}/cage/fill"), &flo, &format!("{stale}&csrf={csrf}")).await?;
        ensure!(answer.status == 400 && answer.body.contains("property"), "a form drawn for another property: {} {}", answer.status, answer.body);
        // An empty choice is the default property, by its id: the pages answer again (an empty
        // id had been kept, and every page refused it).
        let empty = send(&http, "POST", &format!("{base}/property"), &flo, &format!("csrf={csrf}&property=")).await?;
        ensure!(empty.status == 303, "the default chosen: {} {}", empty.status, empty.body);
        let page = send(&http, "GET", &format!("{base}/floor/tables"), &flo, "").await?;
        ensure!(page.status == 200, "the floor's tables of the default property: {} {}", page.status, page.body);
        server.stop().await
    }

    /// The live feed ends with the session (the console pass: after the sign-out it still
    /// delivered the positions of new events on the dead cookie).
    #[tokio::test(flavor = "multi_thread")]
    async fn the_live_feed_ends_with_the_session() -> anyhow::Result<()> {
        let server = TestServer::start_with("console-live", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let (mut cage, mut floor) = (server.client(principal::CAGE).await?, server.client(principal::FLOOR).await?);
        let signed = sign_in(&http, &base, principal::FLOOR.2).await?;
        let session = session_cookie(&signed, "chipledger_session").context("a session")?;
        let page = send(&http, "GET", &format!("{base}/"), &session, "").await?;
        let csrf = value_of(&page.body, "csrf").context("the session's CSRF token")?.to_string();
        let request = http::Request::builder().method("GET").uri(format!("{base}/live?after=0")).header(http::header::COOKIE, &session);
        let mut feed = http.request(request.body(Full::new(bytes::Bytes::new()))?).await?.into_body();
        // Signed in: the cage's opening is delivered.
        crate::scenario::open_cage(&mut cage).await?;
        let mut seen = String::new();
        while !seen.contains("event: recorded") {
            let frame = tokio::time::timeout(Duration::from_secs(60), feed.frame()).await?.context("the feed ended while signed in")??;
            if let Ok(data) = frame.into_data() {
                seen.push_str(&String::from_utf8_lossy(&data));
            }
        }
        let signed_out = send(&http, "POST", &format!("{base}/signout"), &session, &format!("csrf={csrf}")).await?;
        ensure!(signed_out.status == 303, "signed out: {}", signed_out.status);
        let opened = crate::scenario::open_nlhe_table(&mut floor, "T-LIVE").await?;
        let position = opened.events.last().context("the table's event")?.global_position;
        // Signed out: the feed ends without the table's event (bounded: a feed that neither
        // ends nor delivers it fails the test).
        let delivered = format!("data: {position}");
        let mut after = String::new();
        let read = async {
            while let Some(frame) = feed.frame().await {
                if let Ok(data) = frame?.into_data() {
                    after.push_str(&String::from_utf8_lossy(&data));
                }
                if after.contains(&delivered) {
                    break;
                }
            }
            anyhow::Ok(())
        };
        tokio::time::timeout(Duration::from_secs(120), read).await.context("the feed neither ended nor delivered the event")??;
        ensure!(!after.contains(&delivered), "the feed delivered position {position} after the sign-out: {after}");
        server.stop().await
    }

    /// A fill form's fields (no CSRF token) as drawn in `property`, its command id numbered `n`.
    fn fill_form(property: &str, n: u32, second_token: &str) -> String {
        format!(
            "command_id=console-00000000-0000-4000-8000-{n:012}&property={property}&table_id=T1&cage_id=MAIN&slip_no=1&chip_2500=4&second_token={second_token}"
        )
    }

    /// R-AUDIT-3: a cage form refused for its second person (none, the caller's own token,
    /// nobody's token, an auditor's, who may approve nothing) is kept among the refusals with
    /// the rule of its dual control (R-CHIP-3), as the same fill sent over gRPC with a bad
    /// approval is; a form posted by a role that may not send it (a dealer's) is kept as its
    /// gRPC call is (R-AUDIT-2). The hostile pass found the console's refusals only on the page.
    #[tokio::test(flavor = "multi_thread")]
    async fn forms_refused_for_their_second_person_or_role_are_kept_among_the_refusals() -> anyhow::Result<()> {
        let server = TestServer::start_with("console-refused", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let mut auditor = server.client(principal::AUDITOR).await?;
        let before = chipledger_tests::head(&mut auditor).await?;
        let session_of = |token: &'static str| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let signed = sign_in(&http, &base, token).await?;
                let session = session_cookie(&signed, "chipledger_session").context("a session")?;
                let page = send(&http, "GET", &format!("{base}/cage"), &session, "").await?;
                let csrf = value_of(&page.body, "csrf").context("the session's CSRF token")?.to_string();
                anyhow::Ok((session, csrf))
            }
        };
        let (cashier, cashier_csrf) = session_of(principal::CAGE.2).await?;
        let attempts = [
            (1, "", "APPROVAL_MISSING"),
            (2, principal::CAGE.2, "APPROVER_IS_CALLER"),
            (3, "nobodys-token-0123456789", "APPROVAL_INVALID"),
            (4, principal::AUDITOR.2, "APPROVER_ROLE_NOT_PERMITTED"),
        ];
        for (n, second, reason) in attempts {
            // Fields a fill does not read, filled with what no field holds, are not kept (the
            // fixes' pass: script, formula and bidirectional-override text were kept as filled).
            let unread = "&player_id=%3Cscript%3E&amount=%3D1%2B1&cash=%E2%80%AEgnp&note=%0D%0Arecount%C2%85";
            let answer = send(&http, "POST", &format!("{base}/cage/fill"), &cashier, &format!("{}{unread}&csrf={cashier_csrf}", fill_form(&server.property_id, n, second))).await?;
            ensure!(answer.status == 403 && answer.body.contains(reason) && answer.body.contains("R-CHIP-3"), "{reason}: {} {}", answer.status, answer.body);
            // The field named is the second person's (the floor's signer_2), not the cashier's own.
            ensure!(answer.body.contains("signer_2") && !answer.body.contains("signer_1"), "{reason} names the floor's field: {}", answer.body);
            // The form's command id is spent: sent again with the floor's token, it is not a fill.
            let again = send(&http, "POST", &format!("{base}/cage/fill"), &cashier, &format!("{}&csrf={cashier_csrf}", fill_form(&server.property_id, n, principal::FLOOR.2))).await?;
            ensure!(again.status != 200, "{reason}: the refused form's id sent again: {} {}", again.status, again.body);
        }
        // A form whose fields are malformed is answered as the same request over gRPC is, and
        // kept nowhere, whatever its second person (the console pass: script and formula text
        // were kept as a table id among the refusals).
        let malformed = fill_form(&server.property_id, 6, "nobodys-token-0123456789").replace("table_id=T1", "table_id=%3DHYPERLINK(%22x%22)%3Cscript%3E");
        let answer = send(&http, "POST", &format!("{base}/cage/fill"), &cashier, &format!("{malformed}&csrf={cashier_csrf}")).await?;
        ensure!(answer.status == 400 && answer.body.contains("table_id"), "a malformed form: {} {}", answer.status, answer.body);
        let (dealer, dealer_csrf) = session_of(principal::DEALER.2).await?;
        let answer = send(&http, "POST", &format!("{base}/cage/fill"), &dealer, &format!("{}&csrf={dealer_csrf}", fill_form(&server.property_id, 5, principal::FLOOR.2))).await?;
        ensure!(answer.status == 403 && answer.body.contains("ROLE_NOT_PERMITTED"), "a dealer's fill: {} {}", answer.status, answer.body);
        ensure!(answer.body.contains("may not do this"), "a refused action is a thing done, not a page seen: {}", answer.body);

        let after = chipledger_tests::head(&mut auditor).await?;
        ensure!(after.global_position == before.global_position, "nothing moved");
        ensure!(after.refusal_seq == before.refusal_seq + 5, "each refused form kept once: {} -> {}", before.refusal_seq, after.refusal_seq);
        let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
        for (n, _, reason) in attempts {
            let command_id = format!("console-00000000-0000-4000-8000-{n:012}");
            let record = kept.iter().find(|record| record.command_id == command_id).with_context(|| format!("{command_id} kept: {kept:?}"))?;
            ensure!(
                (record.reason_code.as_str(), record.rule_id.as_str(), record.actor_id.as_str()) == (reason, "R-CHIP-3", principal::CAGE.0),
                "{command_id}: {record:?}"
            );
            ensure!(
                record.request_json.contains("\"table_id\":\"T1\"")
                    && !["script", "=1+1", "\u{202e}", "gnp", "\\r", "\\n", "\u{85}"].iter().any(|text| record.request_json.contains(text)),
                "{command_id} keeps the fill's own fields only: {}",
                record.request_json
            );
        }
        let denied = kept.iter().find(|record| record.command_id.contains(&format!("~denied~{}~", principal::DEALER.0))).context("the dealer's fill kept")?;
        ensure!((denied.reason_code.as_str(), denied.rule_id.as_str()) == ("ROLE_NOT_PERMITTED", "R-AUDIT-2"), "{denied:?}");
        // Found by the table's filter too (the console's second pass: they were not).
        let at_table = auditor.audit.list_rejections(pb::ListRejectionsRequest { table_id: "T1".into(), ..Default::default() }).await?.into_inner().rejections;
        for (n, _, _) in attempts {
            let command_id = format!("console-00000000-0000-4000-8000-{n:012}");
            ensure!(at_table.iter().any(|record| record.command_id == command_id), "{command_id} under table T1: {at_table:?}");
        }
        server.stop().await
    }

    /// The console pass: the cage page dropped a marker redeemed in part (R-MARK-1: "redeemed
    /// in whole or part"), and the table page showed a voided fill as a live one, without the
    /// void's two signers (R-CHIP-3).
    #[tokio::test(flavor = "multi_thread")]
    async fn the_pages_show_a_marker_redeemed_in_part_a_voided_slip_and_a_patrons_buy_in_and_cash_out() -> anyhow::Result<()> {
        let server = TestServer::start_with("console-pages", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let mut cage = server.client(principal::CAGE).await?;
        let mut floor = server.client(principal::FLOOR).await?;
        let mut admin = server.client(principal::ADMIN).await?;
        let mut cfo = server.client(principal::ADMIN_2).await?;
        crate::scenario::stocked_table(&mut cage, &mut floor, crate::scenario::TABLE).await?;
        let line = pb::SetCreditLine { header: chipledger_tests::header("line-P1"), player_id: "P1".into(), line_cents: 50_000, approved_by: principal::ADMIN_2.0.into() };
        admin.cage.set_credit_line(chipledger_tests::approved(line, &mut [&mut cfo]).await?).await?;
        let marker = pb::IssueMarker {
            header: chipledger_tests::header("marker-1"),
            cage_id: crate::scenario::CAGE.into(),
            player_id: "P1".into(),
            marker_no: 1,
            chips: vec![chipledger_tests::chips(2_500, 4)],
            approved_by: principal::FLOOR.0.into(),
            delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
        };
        cage.cage.issue_marker(chipledger_tests::approved(marker, &mut [&mut floor]).await?).await?;
        let redeem = pb::RedeemMarker { header: chipledger_tests::header("redeem-1"), cage_id: crate::scenario::CAGE.into(), player_id: "P1".into(), marker_no: 1, amount_cents: 2_500 };
        cage.cage.redeem_marker(redeem).await?;
        let fill = pb::Fill {
            header: chipledger_tests::header("fill-2"),
            table_id: crate::scenario::TABLE.into(),
            cage_id: crate::scenario::CAGE.into(),
            slip_no: 2,
            chips: vec![chipledger_tests::chips(2_500, 4)],
            signer_1: principal::CAGE.0.into(),
            signer_2: principal::FLOOR.0.into(),
        };
        cage.cage.fill(chipledger_tests::approved(fill, &mut [&mut floor]).await?).await?;
        let void = pb::VoidSlip {
            header: chipledger_tests::header("void-2"),
            table_id: crate::scenario::TABLE.into(),
            cage_id: crate::scenario::CAGE.into(),
            kind: pb::SlipKind::Fill as i32,
            slip_no: 2,
            reason: "sent to the wrong table".into(),
            signer_1: principal::CAGE.0.into(),
            signer_2: principal::FLOOR.0.into(),
        };
        cage.cage.void_slip(chipledger_tests::approved(void, &mut [&mut floor]).await?).await?;

        let signed = sign_in(&http, &base, principal::CAGE.2).await?;
        let session = session_cookie(&signed, "chipledger_session").context("a session")?;
        let cage_page = send(&http, "GET", &format!("{base}/cage"), &session, "").await?;
        ensure!(!cage_page.body.contains("No markers outstanding."), "the marker owed in part is outstanding: {}", cage_page.body);
        ensure!(cage_page.body.contains("$75.00"), "$75.00 of the $100.00 is outstanding: {}", cage_page.body);
        let signed = sign_in(&http, &base, principal::FLOOR.2).await?;
        let session = session_cookie(&signed, "chipledger_session").context("a session")?;
        let table_page = send(&http, "GET", &format!("{base}/tables/{}", crate::scenario::TABLE), &session, "").await?;
        let voided = format!("fill (voided by {} and {}: sent to the wrong table)", principal::CAGE.0, principal::FLOOR.0);
        ensure!(table_page.body.contains(&voided), "the fill shows as voided by its two signers: {}", table_page.body);
        // The patron's page lists the buy-in and the cash-out (it listed neither).
        let mut dealer = server.client(principal::DEALER).await?;
        dealer.table.buy_in(cash_buy_in("buy-P2", crate::scenario::TABLE, 2, "P2", 10_000)).await?;
        // And a top-up from chips bought at the cage (the auditor's pass: a top-up from the pocket
        // was nowhere on the page).
        let sale = pb::SellChips { header: chipledger_tests::header("sell-P2"), cage_id: crate::scenario::CAGE.into(), player_id: "P2".into(), chips: vec![chipledger_tests::chips(2_500, 2)], supervisor_id: None };
        cage.cage.sell_chips(sale).await?;
        let top_up = pb::TopUp {
            header: chipledger_tests::header("top-up-P2"),
            table_id: crate::scenario::TABLE.into(),
            seat: 2,
            amount_cents: 5_000,
            source: pb::FundsSource::PocketChips as i32,
            supervisor_id: None,
            player_id: "P2".into(),
        };
        dealer.table.top_up(top_up).await?;
        let cash_out = pb::CashOut { header: chipledger_tests::header("out-P2"), table_id: crate::scenario::TABLE.into(), seat: 2, player_id: "P2".into() };
        dealer.table.cash_out(cash_out).await?;
        let player_page = send(&http, "GET", &format!("{base}/players/P2"), &session, "").await?;
        for line in [
            format!("sat at {} seat 2 with $100.00", crate::scenario::TABLE),
            format!("played $50.00 of pocket chips at {} seat 2", crate::scenario::TABLE),
            format!("left {} seat 2 with $150.00", crate::scenario::TABLE),
        ] {
            ensure!(player_page.body.contains(&line), "the player page lists {line:?}: {}", player_page.body);
        }
        // The re-buy wait on the page is the ledger's (R-REBUY-1): the $150 left with binds.
        ensure!(player_page.body.contains("must be at least $150.00"), "the page's re-buy wait: {}", player_page.body);
        server.stop().await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn forged_sessions_missing_csrf_and_unknown_tokens_are_refused_and_move_nothing() -> anyhow::Result<()> {
        let server = TestServer::start_with("console-hostile", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let mut admin = server.client(principal::ADMIN).await?;
        let log_before = chipledger_tests::head(&mut admin).await?;

        // No session, a forged one: every page sends the browser to sign in; nothing is shown.
        for cookie in ["", "chipledger_session=00ff00ff", "chipledger_session="] {
            let answer = send(&http, "GET", &format!("{base}/compliance"), cookie, "").await?;
            ensure!(answer.status == 303 && answer.location == "/signin", "{cookie:?}: {} {}", answer.status, answer.location);
        }
        // Sign-in without the form's own token (a cross-site post), and with an unknown token.
        let forged = send(&http, "POST", &format!("{base}/signin"), "", &format!("token={}", principal::CAGE.2)).await?;
        ensure!(forged.status == 403 && session_cookie(&forged, "chipledger_session").is_none(), "sign-in without its form token: {}", forged.status);
        let page = send(&http, "GET", &format!("{base}/signin"), "", "").await?;
        let signin_cookie = session_cookie(&page, "chipledger_signin").context("the sign-in cookie")?;
        let signin_csrf = value_of(&page.body, "signin_csrf").context("the sign-in form token")?.to_string();
        let unknown = send(&http, "POST", &format!("{base}/signin"), &signin_cookie, &format!("signin_csrf={signin_csrf}&token=guessed-token-000")).await?;
        ensure!(unknown.status == 401 && session_cookie(&unknown, "chipledger_session").is_none(), "an unknown token: {}", unknown.status);
        // No development door on a configured server.
        let development = send(&http, "POST", &format!("{base}/signin"), &signin_cookie, &format!("signin_csrf={signin_csrf}&development=1")).await?;
        ensure!(development.status == 401, "no anonymous sign-in when principals are configured: {}", development.status);

        // A real cashier's session, then forms without the session's CSRF token.
        let signed = sign_in(&http, &base, principal::CAGE.2).await?;
        ensure!(signed.status == 303 && signed.location == "/", "the cashier lands on the floor: {} {}", signed.status, signed.location);
        let session = session_cookie(&signed, "chipledger_session").context("a session")?;
        ensure!(signed.cookies.iter().any(|cookie| cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict")), "{:?}", signed.cookies);
        let fill = fill_form(&server.property_id, 1, principal::FLOOR.2);
        for csrf in ["", "&csrf=0000", "&csrf="] {
            let answer = send(&http, "POST", &format!("{base}/cage/fill"), &session, &format!("{fill}{csrf}")).await?;
            ensure!(answer.status == 403, "a fill without the session's CSRF token ({csrf:?}) is refused: {}", answer.status);
        }
        // A command id the console did not draw is refused too, even with the right CSRF token.
        let cage_page = send(&http, "GET", &format!("{base}/cage"), &session, "").await?;
        let csrf = value_of(&cage_page.body, "csrf").context("the session's CSRF token")?.to_string();
        let foreign = fill.replace("command_id=console-", "command_id=terminal-");
        let answer = send(&http, "POST", &format!("{base}/cage/fill"), &session, &format!("{foreign}&csrf={csrf}")).await?;
        ensure!(answer.status == 400 && answer.body.contains("command_id"), "a foreign command id: {}", answer.status);
        // A form is no way around the gate's checks: a slip number beyond 2^53 - 1 is bad input
        // there too, and never reaches the rules (nothing recorded, no refusal: checked below).
        let huge = fill.replace("slip_no=1", "slip_no=18446744073709551615");
        let answer = send(&http, "POST", &format!("{base}/cage/fill"), &session, &format!("{huge}&csrf={csrf}")).await?;
        ensure!(answer.status == 400 && answer.body.contains("slip_no"), "a slip number beyond 2^53 - 1: {} {}", answer.status, answer.body);
        // A cashier's session may not see compliance.
        let answer = send(&http, "GET", &format!("{base}/compliance"), &session, "").await?;
        ensure!(answer.status == 403 && answer.body.contains("ROLE_NOT_PERMITTED"), "compliance for a cashier: {}", answer.status);
        // Signed out, the cookie is dead.
        let out = send(&http, "POST", &format!("{base}/signout"), &session, &format!("csrf={csrf}")).await?;
        ensure!(out.status == 303, "sign-out: {}", out.status);
        let answer = send(&http, "GET", &format!("{base}/cage"), &session, "").await?;
        ensure!(answer.status == 303 && answer.location == "/signin", "the old session after sign-out: {}", answer.status);

        let log_after = chipledger_tests::head(&mut admin).await?;
        ensure!(log_after.global_position == log_before.global_position, "nothing was recorded");
        ensure!(log_after.refusal_seq == log_before.refusal_seq, "nothing reached the rules either");
        server.stop().await
    }

    /// A request to a host name the console does not know is not answered (421), with tokens
    /// configured too: a page whose name a DNS rebinding points at the console gets nothing (the
    /// console pass read the sign-in page as `attacker.example` and could lock sign-in for the
    /// victim's address). Addresses, `localhost` and the names of `[console] hosts` are answered.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_to_a_host_name_the_console_does_not_know_is_not_answered() -> anyhow::Result<()> {
        let options = ServerOptions {
            console: true,
            customize: Some(|file: &mut chipledger_server::config::FileConfig| file.console.hosts = Some(vec!["Console.Casino.example.".into()])),
            ..ServerOptions::default()
        };
        let server = TestServer::start_with("console-hosts", options, None).await?;
        let addr = server.console_addr.context("the console listens")?;
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        let port = addr.port();
        for (host, answered) in [
            (format!("attacker.example:{port}"), false),
            ("attacker.example".to_string(), false),
            (format!("console.casino.example.attacker.example:{port}"), false),
            (addr.to_string(), true),
            (format!("localhost:{port}"), true),
            (format!("console.casino.example:{port}"), true),
            ("CONSOLE.casino.example".to_string(), true),
            (format!("console.casino.example.:{port}"), true),
            ("localhost.".to_string(), true),
        ] {
            let request = http::Request::builder().method("GET").uri(format!("http://{addr}/signin")).header(http::header::HOST, &host).body(Full::new(bytes::Bytes::new()))?;
            let status = http.request(request).await?.status().as_u16();
            ensure!((status != 421) == answered && (status == 421 || status == 200), "Host {host}: {status}");
        }
        server.stop().await
    }

    /// Guessing tokens through the sign-in form is slowed: after five wrong tokens from one
    /// address, even a right one waits (429) for the rest of the minute. A right token between
    /// them clears nothing (the console pass guessed on forever, four wrong and its own right).
    #[tokio::test(flavor = "multi_thread")]
    async fn wrong_tokens_from_one_address_make_it_wait() -> anyhow::Result<()> {
        let server = TestServer::start_with("console-guess", ServerOptions { console: true, ..ServerOptions::default() }, None).await?;
        let base = format!("http://{}", server.console_addr.context("the console listens")?);
        let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
        for guess in 0..5 {
            let answer = sign_in(&http, &base, &format!("guess-{guess}-0123456789")).await?;
            ensure!(answer.status == 401, "wrong token {guess}: {}", answer.status);
            if guess == 3 {
                let own = sign_in(&http, &base, principal::DEALER.2).await?;
                ensure!(own.status == 303, "the guesser's own token signs in: {}", own.status);
            }
        }
        let right = sign_in(&http, &base, principal::AUDITOR.2).await?;
        ensure!(right.status == 429 && session_cookie(&right, "chipledger_session").is_none(), "after five wrong tokens: {}", right.status);
        ensure!(right.body.contains("try again in"), "the page says how long to wait");
        server.stop().await
    }
}
