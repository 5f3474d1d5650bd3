//! The back-office web console: the ledger in a browser for the floor, the cage and the auditors.
//!
//! Served by chipledgerd on a listener of its own (`[console] listen`; on by default only in the
//! development mode, on loopback). Every page is answered by calling the gRPC service
//! implementations in-process ([`Services`]) as the signed-in principal, after the same role
//! table check the gate makes ([`access::authorize`]): the console has no query layer, no
//! database access and no rules of its own. Pages are server-rendered (minijinja templates
//! compiled into the binary, auto-escaped); the floor updates live over server-sent events fed
//! by the Subscribe RPC; nothing is fetched from outside the binary.
//!
//! Sign-in exchanges a principal's bearer token (or, under mutual TLS, its client certificate)
//! for a session cookie (HttpOnly, SameSite=Strict, Secure under TLS). Every form carries the
//! session's CSRF token. Cage actions are the same command RPCs with a command id minted when
//! the form is drawn, so a double click or a resubmitted form records once.

mod actions;
mod pages;
mod tls;
mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tonic::{Code, Request, Status};

use crate::access::{self, Authenticator, Principal};
use crate::config::{Config, PropertyConfig};
use crate::service::Services;

const SESSION_COOKIE: &str = "chipledger_session";
const SIGNIN_COOKIE: &str = "chipledger_signin";
/// Sign-ins kept at most (older idle ones are dropped first).
const MAX_SESSIONS: usize = 10_000;
/// Wrong tokens accepted from one source within [`FAILURE_WINDOW`] before it must wait.
const MAX_FAILURES: u32 = 5;
const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Sources tracked at most (the oldest windows go first).
const MAX_FAILURE_SOURCES: usize = 10_000;

/// The pages, in the navigation's order: (path, title, the RPC whose role rule admits a
/// principal to the page). A page calls other RPCs too, each checked the same way.
pub const PAGES: &[(&str, &str, &str)] = &[
    ("/", "Floor", "/chipledger.v1.LedgerService/ListEvents"),
    ("/cage", "Cage", "/chipledger.v1.CageService/SellChips"),
    ("/compliance", "Compliance", "/chipledger.v1.AuditService/PatronCashActivity"),
    ("/chain", "Chain", "/chipledger.v1.AuditService/VerifyChain"),
];

/// The console of one chipledgerd.
pub struct Console {
    services: Services,
    authenticator: Arc<Authenticator>,
    sessions: Mutex<HashMap<[u8; 32], Session>>,
    idle: Duration,
    /// `[console] hosts`: the names it answers besides addresses and `localhost`.
    hosts: Vec<String>,
    templates: minijinja::Environment<'static>,
    tls: Option<tls::Acceptor>,
    /// The last chain verification run from the console, per property.
    verifications: Mutex<HashMap<String, pages::Verification>>,
    /// The cage actions sent, for resubmissions ([`actions`]).
    sent: Mutex<actions::Sent>,
    /// Wrong tokens per source: sign-ins by address, second persons' tokens by the signed-in
    /// principal (the forms must not be a way to guess tokens).
    failures: Failures,
}

/// Failed token checks per source, for a backoff.
#[derive(Default)]
struct Failures {
    by_source: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Failures {
    /// How long `source` must still wait, when it failed too often lately.
    fn wait(&self, source: &str) -> Option<Duration> {
        let failures = self.by_source.lock().expect("console failures");
        let (count, since) = failures.get(source)?;
        let left = FAILURE_WINDOW.checked_sub(since.elapsed())?;
        (*count >= MAX_FAILURES).then_some(left)
    }

    fn failed(&self, source: &str) {
        let mut failures = self.by_source.lock().expect("console failures");
        if failures.len() >= MAX_FAILURE_SOURCES {
            failures.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        let entry = failures.entry(source.to_string()).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }
}

#[derive(Clone)]
struct Session {
    /// Who acts, and in which property (`acting_in`: chosen with `/property`).
    principal: Principal,
    csrf: String,
    last_seen: Instant,
}

impl Console {
    pub fn new(services: Services, authenticator: Arc<Authenticator>, config: &Config) -> Result<Arc<Console>, String> {
        let tls = match &config.tls {
            Some(files) => Some(tls::Acceptor::from_files(files)?),
            None => None,
        };
        Ok(Arc::new(Console {
            services,
            authenticator,
            sessions: Mutex::new(HashMap::new()),
            idle: config.console_idle,
            hosts: config.console_hosts.clone(),
            templates: view::templates(),
            tls,
            verifications: Mutex::new(HashMap::new()),
            sent: Mutex::new(actions::Sent::default()),
            failures: Failures::default(),
        }))
    }

    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Serves until `stopping` turns true.
    pub async fn serve(self: Arc<Console>, listener: TcpListener, mut stopping: tokio::sync::watch::Receiver<bool>) {
        let app = router(self.clone());
        let stop = async move {
            let _ = stopping.wait_for(|stopping| *stopping).await;
        };
        let result = match &self.tls {
            Some(acceptor) => tls::serve(listener, acceptor.clone(), app, stop).await,
            None => {
                axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>())
                    .with_graceful_shutdown(stop)
                    .await
            }
        };
        if let Err(error) = result {
            tracing::error!(%error, "the console stopped");
        }
    }

    /// An RPC of the service as `principal`, after the role table (the gate's check).
    async fn call<Req, Resp, Fut>(
        &self,
        principal: &Principal,
        rpc: &'static str,
        message: Req,
        handler: impl FnOnce(Services, Request<Req>) -> Fut,
    ) -> Result<Resp, Status>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        self.call_at(principal, rpc, message, handler).await.map(|(response, _)| response)
    }

    /// As [`Console::call`], with the property's head position the read reflects (the
    /// `chipledger-read-position` the service answers with).
    async fn call_at<Req, Resp, Fut>(
        &self,
        principal: &Principal,
        rpc: &'static str,
        message: Req,
        handler: impl FnOnce(Services, Request<Req>) -> Fut,
    ) -> Result<(Resp, i64), Status>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
    {
        access::authorize_call(principal, rpc)?;
        let mut request = Request::new(message);
        request.extensions_mut().insert(principal.clone());
        let response = handler(self.services.clone(), request).await?;
        let position = response
            .metadata()
            .get(crate::shards::POSITION_HEADER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<i64>().ok())
            .unwrap_or(0);
        Ok((response.into_inner(), position))
    }

    fn property(&self, principal: &Principal) -> Result<Arc<PropertyConfig>, Status> {
        self.services.ledger().property_config(principal, "")
    }

    /// Now, by the clock commands are timed by (the database's, R-CHIP-6): the console's
    /// "today" and re-buy waits had been read off this host's clock.
    fn now_ms(&self) -> i64 {
        self.services.ledger().now()
    }

    fn render(&self, name: &str, context: minijinja::Value) -> Response {
        match self.templates.get_template(name).and_then(|template| template.render(context)) {
            Ok(html) => Html(html).into_response(),
            Err(error) => {
                tracing::error!(%error, template = name, "a console template failed");
                (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be drawn").into_response()
            }
        }
    }

    /// A page for `signed`, with the navigation its role may use.
    fn page(&self, signed: &Signed, name: &str, title: &str, body: minijinja::Value) -> Response {
        let nav: Vec<minijinja::Value> = PAGES
            .iter()
            .filter(|(_, _, rpc)| access::authorize(&signed.principal, rpc).is_ok())
            .map(|(path, title, _)| minijinja::context! { path => path, title => title })
            .collect();
        let property = self.property(&signed.principal).map(|property| property.id.clone()).unwrap_or_default();
        let properties = self.properties_of(&signed.principal);
        let context = minijinja::context! {
            title => title,
            nav => nav,
            property => property,
            properties => if properties.len() > 1 { properties } else { Vec::new() },
            who => signed.principal.id,
            role => chipledger_rules::words::role(signed.principal.role),
            csrf => signed.csrf,
            ..body
        };
        self.render(name, context)
    }

    /// The page an RPC's refusal or failure becomes: what a person can act on.
    fn refusal(&self, signed: &Signed, status: &Status) -> Response {
        self.refusal_page(signed, status, None)
    }

    /// As [`Console::refusal`], with a link to where the person goes next.
    fn refusal_with_back(&self, signed: &Signed, status: &Status, path: &str, words: &str) -> Response {
        self.refusal_page(signed, status, Some((path, words)))
    }

    fn refusal_page(&self, signed: &Signed, status: &Status, back: Option<(&str, &str)>) -> Response {
        let code = match status.code() {
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange | Code::AlreadyExists => {
                StatusCode::BAD_REQUEST
            }
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let info = view::refusal_details(status);
        let reason = tonic_types::StatusExt::get_error_details(status).error_info().map(|info| info.reason.clone());
        let headline = match status.code() {
            // A refused approval is PERMISSION_DENIED too, but the role may send the command.
            // A form's action (it has a way back) is a thing done, not a page seen.
            Code::PermissionDenied if reason.as_deref().is_none_or(|reason| reason == access::ROLE_NOT_PERMITTED) => format!(
                "Your role ({}) may not {}",
                chipledger_rules::words::role(signed.principal.role),
                if back.is_some() { "do this" } else { "see this page" }
            ),
            Code::NotFound => "Not found".to_string(),
            Code::Unavailable => "The ledger is unavailable".to_string(),
            _ => "Refused".to_string(),
        };
        let back = back.map(|(path, words)| minijinja::context! { path => path, words => words });
        let body = minijinja::context! { headline => headline, message => status.message(), info => info, back => back };
        let mut response = self.page(signed, "refused.html", &headline, body);
        *response.status_mut() = code;
        response
    }

    /// The session of the request's cookie, if live. A request the page makes by itself (the
    /// floor's redraw after a recorded event, `BACKGROUND_HEADER`) is no use of the session:
    /// it does not keep it from idling out (the console pass: an unattended floor page on a busy
    /// floor stayed signed in for good).
    fn session_of(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let key = session_key(&id);
        let mut sessions = self.sessions.lock().expect("console sessions");
        let session = sessions.get_mut(&key)?;
        // A principal a reload removed, or changed (role, properties, tokens), signs in again
        // (its session had kept the role it signed in with, and outlived a rotated token).
        if session.last_seen.elapsed() > self.idle || !self.authenticator.still_holds(&session.principal) {
            sessions.remove(&key);
            return None;
        }
        if !headers.contains_key(BACKGROUND_HEADER) {
            session.last_seen = Instant::now();
        }
        Some(session.clone())
    }

    fn open_session(&self, principal: Principal) -> String {
        let id = random_hex();
        let mut sessions = self.sessions.lock().expect("console sessions");
        sessions.retain(|_, session| session.last_seen.elapsed() <= self.idle);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions.iter().min_by_key(|(_, session)| session.last_seen).map(|(key, _)| *key)
        {
            sessions.remove(&oldest);
        }
        tracing::info!(principal = principal.id, "console sign-in");
        // The session acts in the default property when the principal may, else in the first
        // of its own (a floor supervisor of another property had been refused every page).
        let acting_in = self.properties_of(&principal).into_iter().next();
        let principal = Principal { acting_in, ..principal };
        sessions.insert(session_key(&id), Session { principal, csrf: random_hex(), last_seen: Instant::now() });
        id
    }

    /// The properties the signed-in principal may act on, the default first.
    fn properties_of(&self, principal: &Principal) -> Vec<String> {
        let properties = self.services.ledger().router().properties();
        let mut ids: Vec<String> = properties.ids().filter(|id| principal.properties.allows(id)).map(str::to_string).collect();
        ids.sort_by_key(|id| (id != properties.default_id(), id.clone()));
        ids
    }

    /// The session acts in `property_id` from now on: a principal of several properties chooses
    /// one (the console pass: every page answered the default property only, so another
    /// property's tables, refusals and compliance could not be read).
    fn choose_property(&self, signed: &Signed, property_id: &str) -> Result<(), Status> {
        // The property as the server resolves it (an empty choice is the default, by its id).
        let property = self.services.ledger().property_config(&signed.principal, property_id)?;
        let mut sessions = self.sessions.lock().expect("console sessions");
        let session = sessions.get_mut(&signed.session).ok_or_else(|| Status::unauthenticated("the session has ended: sign in again"))?;
        session.principal.acting_in = Some(property.id.clone());
        Ok(())
    }

    /// The session is still open: not signed out, not idle past the timeout (a page's own
    /// requests keep it alive; a stream it holds open does not).
    fn session_open(&self, key: &[u8; 32]) -> bool {
        self.sessions.lock().expect("console sessions").get(key).is_some_and(|session| session.last_seen.elapsed() <= self.idle)
    }

    fn close_session(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, SESSION_COOKIE) {
            self.sessions.lock().expect("console sessions").remove(&session_key(&id));
        }
    }

    fn cookie_attributes(&self) -> &'static str {
        if self.is_tls() { "; Path=/; HttpOnly; SameSite=Strict; Secure" } else { "; Path=/; HttpOnly; SameSite=Strict" }
    }
}

fn session_key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

fn random_hex() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new().fill(&mut bytes).expect("the system's random source");
    hex::encode(bytes)
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

/// Constant-time equality of two secrets (compared as digests).
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b): ([u8; 32], [u8; 32]) = (Sha256::digest(a.as_bytes()).into(), Sha256::digest(b.as_bytes()).into());
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A signed-in principal (the session cookie). Pages without one send the browser to sign in.
pub struct Signed {
    principal: Principal,
    csrf: String,
    /// The session's key (a stream a page holds open ends with the session).
    session: [u8; 32],
}

impl Signed {
    /// The form's CSRF token is the session's (every POST).
    fn check_csrf(&self, form: &HashMap<String, String>) -> Result<(), Response> {
        match form.get("csrf") {
            Some(token) if same_secret(token, &self.csrf) => Ok(()),
            _ => Err((StatusCode::FORBIDDEN, "the form is stale or was not made by this console: reload the page").into_response()),
        }
    }
}

/// Sent by the console's own script on the requests it makes without the user (console.js).
const BACKGROUND_HEADER: &str = "x-chipledger-background";

impl FromRequestParts<Arc<Console>> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, console: &Arc<Console>) -> Result<Signed, Response> {
        match console.session_of(&parts.headers) {
            Some(session) => {
                let key = cookie(&parts.headers, SESSION_COOKIE).map(|id| session_key(&id)).unwrap_or_default();
                Ok(Signed { principal: session.principal, csrf: session.csrf, session: key })
            }
            None => Err(Redirect::to("/signin").into_response()),
        }
    }
}

fn router(console: Arc<Console>) -> Router {
    Router::new()
        .route("/signin", get(signin_page).post(signin))
        .route("/signout", post(signout))
        .route("/property", post(choose_property))
        .route("/assets/console.css", get(|| async { asset("text/css", view::CSS) }))
        .route("/assets/console.js", get(|| async { asset("text/javascript", view::JS) }))
        .route("/", get(pages::floor))
        .route("/floor/tables", get(pages::floor_tables))
        .route("/live", get(pages::live))
        .route("/tables/{table_id}", get(pages::table))
        .route("/tables/{table_id}/hands/{hand_no}", get(pages::hand))
        .route("/players", get(pages::player_search))
        .route("/players/{player_id}", get(pages::player))
        .route("/cage", get(pages::cage))
        .route("/cage/{action}", post(actions::cage_action))
        .route("/compliance", get(pages::compliance))
        .route("/chain", get(pages::chain).post(pages::verify_chain))
        .route("/chain/digest.json", get(pages::digest_download))
        .layer(axum::middleware::map_response(security_headers))
        .layer(axum::middleware::from_fn_with_state(console.clone(), known_hosts_only))
        .with_state(console)
}

/// A request addressed to a host name the console does not know is not answered (421), so a
/// page elsewhere whose name a DNS rebinding points at the console gets nothing: in development
/// mode, where anyone who reaches the console is an anonymous admin, only loopback names (the
/// console pass signed in as admin and read compliance with `Host: attacker.example`); else
/// IP addresses, `localhost` and the names of `[console] hosts` (the console pass:
/// with tokens, such a page could lock sign-in for everyone at the victim's address).
async fn known_hosts_only(
    State(console): State<Arc<Console>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| request.uri().authority().map(|authority| authority.as_str()))
        .unwrap_or_default();
    if console.authenticator.authenticate(None, None).is_ok() {
        if !is_loopback_host(host) {
            return (StatusCode::MISDIRECTED_REQUEST, "development mode answers requests to loopback names only (localhost, 127.0.0.1, [::1])")
                .into_response();
        }
    } else {
        let name = host_name(host);
        let known = name.parse::<std::net::IpAddr>().is_ok()
            || name.eq_ignore_ascii_case("localhost")
            || console.hosts.iter().any(|known| known.eq_ignore_ascii_case(name));
        if !known {
            return (StatusCode::MISDIRECTED_REQUEST, "the console answers the names listed in [console] hosts, and IP addresses").into_response();
        }
    }
    next.run(request).await
}

/// The name or address of a `Host` value, without its port, brackets or a name's final dot.
fn host_name(host: &str) -> &str {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.strip_suffix('.').unwrap_or(name)
}

/// `localhost`, a loopback address, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = host_name(host);
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "max-age=3600")], body).into_response()
}

/// No framing, no outside resources, no sniffing, no caching of ledger pages.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

async fn signin_page(State(console): State<Arc<Console>>) -> Response {
    signin_form(&console, None, StatusCode::OK)
}

fn signin_form(console: &Console, problem: Option<&str>, status: StatusCode) -> Response {
    let token = random_hex();
    let development = console.authenticator.authenticate(None, None).is_ok();
    let context = minijinja::context! {
        title => "Sign in",
        signin_csrf => token,
        problem => problem,
        development => development,
    };
    let mut response = console.render("signin.html", context);
    *response.status_mut() = status;
    let cookie = format!("{SIGNIN_COOKIE}={token}{}; Max-Age=1800", console.cookie_attributes());
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// A token (or, with `development`, the development mode's anonymous principal) for a session.
async fn signin(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    certificate: Option<axum::Extension<tls::PeerNames>>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let source = match peer {
        Some(axum::Extension(axum::extract::ConnectInfo(addr))) => format!("sign-in from {}", addr.ip()),
        None => "sign-in from an unknown address".to_string(),
    };
    if let Some(wait) = console.failures.wait(&source) {
        let problem = format!("Too many wrong tokens from this address: try again in {} s.", wait.as_secs() + 1);
        return signin_form(&console, Some(&problem), StatusCode::TOO_MANY_REQUESTS);
    }
    let expected = cookie(&headers, SIGNIN_COOKIE).unwrap_or_default();
    let given = form.get("signin_csrf").map(String::as_str).unwrap_or_default();
    if expected.is_empty() || !same_secret(&expected, given) {
        return signin_form(&console, Some("The sign-in form expired; try again."), StatusCode::FORBIDDEN);
    }
    let token = form.get("token").map(|token| token.trim()).unwrap_or_default();
    let names = certificate.map(|axum::Extension(names)| names.0);
    let authenticated = if !token.is_empty() {
        console.authenticator.authenticate(None, Some(&format!("Bearer {token}")))
    } else if let Some(names) = &names {
        console.authenticator.authenticate(Some(names), None)
    } else if form.contains_key("development") {
        console.authenticator.authenticate(None, None)
    } else {
        return signin_form(&console, Some("Enter your token."), StatusCode::UNAUTHORIZED);
    };
    let principal = match authenticated {
        Ok(principal) => principal,
        Err(status) => {
            tracing::info!(message = status.message(), %source, "console sign-in refused");
            console.failures.failed(&source);
            return signin_form(&console, Some("That token is not a principal of this server."), StatusCode::UNAUTHORIZED);
        }
    };
    // A right token clears nothing: wrong ones count for their whole window, so a guesser
    // holding one token of their own cannot start the count again (the console pass: four
    // wrong, one right, over and over, never waited).
    // To the first page the role may use (a dealer has none: the floor then says so).
    let landing = PAGES.iter().find(|(_, _, rpc)| access::authorize(&principal, rpc).is_ok()).map_or("/", |(path, _, _)| *path);
    let id = console.open_session(principal);
    let mut response = Redirect::to(landing).into_response();
    let cookie = format!("{SESSION_COOKIE}={id}{}", console.cookie_attributes());
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    let clear = format!("{SIGNIN_COOKIE}={}; Max-Age=0", console.cookie_attributes());
    if let Ok(value) = HeaderValue::from_str(&clear) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The property the session acts on (a form in the header, for a principal of several).
async fn choose_property(State(console): State<Arc<Console>>, signed: Signed, Form(form): Form<HashMap<String, String>>) -> Response {
    if let Err(refused) = signed.check_csrf(&form) {
        return refused;
    }
    let property_id = form.get("property").map(String::as_str).unwrap_or_default();
    match console.choose_property(&signed, property_id) {
        Ok(()) => Redirect::to("/").into_response(),
        Err(status) => console.refusal(&signed, &status),
    }
}

async fn signout(State(console): State<Arc<Console>>, signed: Signed, headers: HeaderMap, Form(form): Form<HashMap<String, String>>) -> Response {
    if let Err(refused) = signed.check_csrf(&form) {
        return refused;
    }
    console.close_session(&headers);
    let mut response = Redirect::to("/signin").into_response();
    let clear = format!("{SESSION_COOKIE}=; Max-Age=0{}", console.cookie_attributes());
    if let Ok(value) = HeaderValue::from_str(&clear) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// `rpc!(Service/Method)`: the gRPC path the role table keys on.
macro_rules! rpc {
    ($service:ident / $method:ident) => {
        concat!("/chipledger.v1.", stringify!($service), "/", stringify!($method))
    };
}
pub(crate) use rpc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_names_an_rpc_of_the_role_table() {
        for (path, _, rpc) in PAGES {
            assert!(access::allowed_roles(rpc).is_some(), "{path}: {rpc} is not in the role table");
        }
    }

    #[test]
    fn development_mode_answers_loopback_names_only() {
        for host in ["localhost", "LOCALHOST:50080", "127.0.0.1", "127.0.0.1:50080", "127.3.2.1:80", "[::1]", "[::1]:50080"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["", "attacker.example", "attacker.example:50080", "localhost.attacker.example", "10.0.0.1:50080", "[::2]:1", "127.0.0.1.nip.io"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn cookies_are_read_by_name_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("a=1; chipledger_session=abc; b=2"));
        assert_eq!(cookie(&headers, SESSION_COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "missing"), None);
    }

    #[test]
    fn free_text_is_escaped_in_every_template() {
        let templates = view::templates();
        let hostile = "<script>alert(1)</script>";
        let context = minijinja::context! {
            title => hostile, nav => Vec::<minijinja::Value>::new(), who => hostile, role => "auditor", csrf => "x",
            headline => hostile, message => hostile, info => vec![("reason", hostile)],
        };
        let html = templates.get_template("refused.html").unwrap().render(context).unwrap();
        assert!(!html.contains(hostile), "{html}");
        assert!(html.contains("&lt;script&gt;"));
    }

    #[test]
    fn a_source_waits_after_too_many_wrong_tokens_within_the_window() {
        let failures = Failures::default();
        for _ in 0..MAX_FAILURES - 1 {
            failures.failed("a");
        }
        assert_eq!(failures.wait("a"), None, "below the limit");
        failures.failed("a");
        assert!(failures.wait("a").is_some_and(|wait| wait <= FAILURE_WINDOW));
        assert_eq!(failures.wait("b"), None, "per source");
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("", "abc"));
    }
}
