//! `jadpo dev [PATH]` (design `server.md` section 13): checks the app,
//! opens its store in an embedded SQLite file (`.jadpo/dev.sqlite`), answers
//! its routes on 127.0.0.1:8080, runs its subscribers and schedules, and
//! prints each attempt's steps (section 23). Providers are a fixture's
//! fakes (`--fakes NAME`, else the fixture `dev` when the app has one), so
//! the app runs offline. A change to the app's files rebuilds it: a clean
//! build replaces the running one between attempts, a failing one leaves
//! the last good build running.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use jadpo_compiler::intern::Name;
use jadpo_compiler::ir::{Prim, Program, Ty};
use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_plan::Plan;
use jadpo_runtime::record::Resume;
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::Store;
use jadpo_runtime::suite::{prepare_fixture, Prepared};
use jadpo_runtime::value::Value;
use jadpo_server::build::Build;
use jadpo_server::engine::listing::{Human, JsonLines, Listen};
use jadpo_server::engine::{self, Engine, Settings};
use jadpo_server::fakes::SharedFake;
use jadpo_server::http::{self, Auth, Http};
use jadpo_server::http_provider::HttpProviders;
use jadpo_server::store::several::{Placement, Several};
use jadpo_server::store::sqlite::Options;

use crate::check::{check_app_lowering, Outcome};
use crate::cli::{DevArgs, WatchFormat};
use crate::render;

/// How long attempts in flight may take to finish after Ctrl-C.
const GRACE: Duration = Duration::from_secs(30);

/// Runs `jadpo dev`; the exit status.
pub fn run(dir: &str, args: &DevArgs) -> u8 {
    match serve(dir, args) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("error: {why}");
            2
        }
    }
}

fn serve(dir: &str, args: &DevArgs) -> Result<(), String> {
    let listing: Arc<dyn Listen> = match args.format {
        WatchFormat::Human => Arc::new(Human(std::sync::Mutex::new(std::io::stdout()))),
        WatchFormat::Json => Arc::new(JsonLines(std::sync::Mutex::new(std::io::stdout()))),
    };
    let (program, plan) = first_build(dir, args)?;
    let mut from = ConfigFrom {
        env: Env::read(args.env_file.as_deref())?,
        fakes: args.fakes.clone(),
        started_fakes: String::new(),
    };
    let (fixture, prepared, config) = from.read(&program)?;
    from.started_fakes = fakes_text(&program, &prepared);
    let env = &from.env;
    let DevStores {
        store,
        setup,
        places: db,
    } = open_store(dir, args, &program, &plan)?;
    let fixture_name = fixture
        .and_then(|f| program.fixtures.get(f))
        .map(|f| f.name.as_str().to_string());
    let journal = args.journal_path(dir);
    let build = Build::new(program, plan);
    // A fixture's fakes answer behind the fake provider server, so every
    // call with a binding goes over HTTP as it would in production; the
    // calls without one are answered in process.
    let (providers, fakes_at) = match fixture {
        Some(_) => {
            let fake = SharedFake::journaled(prepared.scripts.clone(), build.program, &journal)?;
            let (providers, url) = behind_fake_server(Arc::new(fake), build.program, &config)?;
            (providers, Some(url))
        }
        None => (HttpProviders::new(config.clone()), None),
    };
    let providers = Arc::new(providers);
    let settings = Settings {
        runner: format!("dev-{}", std::process::id()),
        concurrency: 8,
        retry_cap_ms: Some(30_000),
        lease_ms: (args.lease * 1000.0) as u64,
        alert_after_ms: args.upkeep.alert_after,
        keep: args.upkeep.retention(),
        ..Settings::default()
    };
    let engine = Engine::new(build, store, providers, config, settings, listing.clone());
    let auth = Auth::from_env(|k| env.get(k))?;
    if build.routes.iter().any(|r| r.auth_required) && !auth.configured() {
        listing.note(
            "note: routes with `auth: required` answer 401 until JADPO_API_KEYS or JADPO_JWT_KEY is set",
        );
    }
    let mut extra = Vec::new();
    if !args.no_reload {
        let reload = reloader(dir.to_string(), engine.clone(), from);
        extra.push(reload.map_err(|e| e.to_string())?);
    }
    let roles = Roles::all();
    let edge = Edge {
        listen: &args.listen,
        metrics: None,
        tls: None,
    };
    run_server(&engine, auth, roles, edge, GRACE, extra, |address| {
        announce(&*listing, build, address, fixture_name.as_deref(), &db);
        for line in &setup {
            listing.note(line);
        }
        if let Some(url) = &fakes_at {
            listing.note(&fake_server_line(url));
        }
    })
}

/// Where a server answers: its address, `/metrics` apart from it or not,
/// and TLS.
pub(crate) struct Edge<'a> {
    pub listen: &'a str,
    pub metrics: Option<&'a str>,
    pub tls: Option<jadpo_server::tls::Acceptor>,
}

/// What a process does (`jadpo serve --roles`).
#[derive(Clone, Copy, Debug)]
pub struct Roles {
    pub routes: bool,
    pub deliveries: bool,
    pub schedules: bool,
    pub maintenance: bool,
}

impl Roles {
    pub fn all() -> Roles {
        Roles {
            routes: true,
            deliveries: true,
            schedules: true,
            maintenance: true,
        }
    }
}

/// Runs the engine's threads and the HTTP server until SIGINT or
/// SIGTERM, then stops taking work and waits up to `grace` for the
/// attempts in flight.
pub(crate) fn run_server(
    engine: &Arc<Engine>,
    auth: Auth,
    roles: Roles,
    edge: Edge<'_>,
    grace: Duration,
    mut threads: Vec<std::thread::JoinHandle<()>>,
    listening: impl FnOnce(&str),
) -> Result<(), String> {
    let Edge {
        listen,
        metrics,
        tls,
    } = edge;
    let http = Http::new(engine.clone(), auth, metrics.is_none());
    if roles.deliveries {
        threads.extend(engine::dispatch::start(engine.clone()).map_err(|e| e.to_string())?);
    }
    threads.push(engine::heartbeat::start(engine.clone()).map_err(|e| e.to_string())?);
    threads.push(engine::gauges::start(engine.clone()).map_err(|e| e.to_string())?);
    if roles.schedules {
        threads.push(engine::schedule::start(engine.clone()).map_err(|e| e.to_string())?);
    }
    if roles.maintenance {
        let keep = engine.settings.keep;
        threads.push(engine::maintenance::start(engine.clone(), keep).map_err(|e| e.to_string())?);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("no runtime for the server: {e}"))?;
    if let Some(address) = metrics {
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(address))
            .map_err(|e| format!("cannot listen on {address} for metrics: {e}"))?;
        let router = http::metrics_router(engine.clone());
        rt.spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
    }
    let served = if roles.routes {
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(listen))
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let address = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| listen.to_string());
        listening(&address);
        let router = http::router(http);
        rt.block_on(async {
            match tls {
                Some(acceptor) => {
                    let listener = jadpo_server::tls::TlsListener::new(listener, acceptor)?;
                    axum::serve(listener, router)
                        .with_graceful_shutdown(shutdown_signal())
                        .await
                }
                None => {
                    axum::serve(listener, router)
                        .with_graceful_shutdown(shutdown_signal())
                        .await
                }
            }
        })
        .map_err(|e| format!("the server stopped: {e}"))
    } else {
        listening("(no routes)");
        rt.block_on(shutdown_signal());
        Ok(())
    };
    engine
        .listing
        .note("stopping: no new work; attempts in flight finish");
    engine.stop();
    let deadline = std::time::Instant::now() + grace;
    for t in threads {
        while !t.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    served
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

fn announce(listing: &dyn Listen, build: &Build, address: &str, fixture: Option<&str>, db: &str) {
    let providers = match fixture {
        Some(f) => format!("fakes from fixture `{f}`"),
        None => "real providers over HTTP".to_string(),
    };
    listing.note(&format!(
        "jadpo dev: serving `{}` on http://{address} (store {db}, {providers})",
        build.program.app.name,
    ));
    for r in &build.routes {
        let key = if r.key_required {
            "  (Idempotency-Key required)"
        } else {
            ""
        };
        listing.note(&format!("  {}{key}", r.label));
    }
    for s in &build.schedules {
        listing.note(&format!(
            "  schedule {} every {}",
            s.name,
            duration_words(s.every_ms)
        ));
    }
}

/// `24h`, `90s`, `250ms`.
fn duration_words(ms: u64) -> String {
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// The app checked with its code and planned; its diagnostics when it
/// has errors.
fn checked(dir: &str) -> Result<(Program, Plan), String> {
    let outcome = check_app_lowering(&FsLoader, dir, jadpo_checker::Wanted::Whole, Lowering::Code);
    let plan = outcome.plan.as_ref().and_then(|p| p.app()).cloned();
    match (&outcome.program, plan, outcome.has_errors()) {
        (Some(_), Some(plan), false) => match outcome.program {
            Some(program) => Ok((program, plan)),
            None => Err(rendered(&outcome, dir)),
        },
        _ => Err(rendered(&outcome, dir)),
    }
}

fn rendered(outcome: &Outcome, dir: &str) -> String {
    let text = render::human::render_all_from(&outcome.files, &outcome.diagnostics, false, dir);
    if text.trim().is_empty() {
        "the app cannot be checked".into()
    } else {
        text
    }
}

/// The first build: with errors, `jadpo dev` shows them and waits for a
/// change (unless `--no-reload`).
fn first_build(dir: &str, args: &DevArgs) -> Result<(Program, Plan), String> {
    let mut seen = stamp(Path::new(dir));
    loop {
        match checked(dir) {
            Ok(built) => return Ok(built),
            Err(text) if args.no_reload => return Err(format!("the app has errors:\n{text}")),
            Err(text) => {
                eprint!("{text}");
                eprintln!("jadpo dev: waiting for a change to the app's files");
            }
        }
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = stamp(Path::new(dir));
            if now != seen {
                seen = now;
                break;
            }
        }
    }
}

/// How the stores the running build set up would serve the new one
/// otherwise (a row written or read through another table or column
/// would be lost, not refused); `None` when they serve it as they are.
fn tables_change(old: (&Program, &Plan), new: (&Program, &Plan)) -> Option<String> {
    let names = |(program, plan): (&Program, &Plan)| {
        app_stores(program, Some(plan))
            .map(|s| s.names)
            .unwrap_or_default()
    };
    let stores = names(new);
    if names(old) != stores {
        return Some("the stores changed".into());
    }
    stores.iter().find_map(|store| {
        let schema = |(program, plan): (&Program, &Plan)| store_schema(program, Some(plan), store);
        schema(old).differs(&schema(new))
    })
}

/// What the config values are read from, at start and again at a reload.
struct ConfigFrom {
    env: Env,
    /// `--fakes`: the fixture whose fakes answer (`dev` when present).
    fakes: Option<String>,
    /// The fakes the server started with ([`fakes_text`]).
    started_fakes: String,
}

/// A fixture's fakes as text naming operations and failures (their ids
/// differ between builds), one line per operation, sorted: two builds'
/// compare equal when their fakes answer alike.
fn fakes_text(program: &Program, prepared: &Prepared) -> String {
    let mut lines: Vec<String> = prepared
        .scripts
        .iter()
        .map(|(op, script)| {
            let name = program
                .operations
                .get(*op)
                .map_or("?", |o| o.qualified.as_str());
            let answers: Vec<String> = script
                .answers
                .iter()
                .map(|a| scripted_text(program, a))
                .collect();
            format!("{name} {} {}", script.replays_failures, answers.join("; "))
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

fn scripted_text(program: &Program, scripted: &jadpo_runtime::fake::Scripted) -> String {
    use jadpo_runtime::fake::Scripted;
    match scripted {
        Scripted::Fail { failure, fields } => {
            let name = program
                .failures
                .get(*failure)
                .map_or("?", |f| f.qualified.as_str());
            format!("fail {name} {fields:?}")
        }
        Scripted::Lost(inner) => format!("lost {}", scripted_text(program, inner)),
        other => format!("{other:?}"),
    }
}

impl ConfigFrom {
    /// The fixture whose fakes answer (none: real providers), its
    /// preparation, and the config values `program` reads.
    fn read(&self, program: &Program) -> Result<(Option<FixtureId>, Prepared, Config), String> {
        // The fixture `dev` answers when there is one; without it (and
        // without `--fakes`) the app calls its providers over HTTP.
        let fixture = match fakes_fixture(program, self.fakes.as_deref()) {
            Ok(id) => Some(id),
            Err(_) if self.fakes.is_none() => None,
            Err(why) => return Err(why),
        };
        let prepared = prepare_fixture(program, fixture);
        if let Some(why) = &prepared.error {
            return Err(format!("the fixture's fakes cannot be made: {why}"));
        }
        let config = config_values(program, Some(&prepared), &self.env, fixture.is_some())?;
        Ok((fixture, prepared, config))
    }
}

type Config = BTreeMap<Name, Value>;
type FixtureId = jadpo_compiler::ir::test::FixtureId;

/// Rebuilds the app when its files change.
fn reloader(
    dir: String,
    engine: Arc<Engine>,
    from: ConfigFrom,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("jadpo-reload".into())
        .spawn(move || {
            let mut seen = stamp(Path::new(&dir));
            while !engine.stopping() {
                std::thread::sleep(Duration::from_millis(500));
                let now = stamp(Path::new(&dir));
                if now == seen {
                    continue;
                }
                seen = now;
                match checked(&dir) {
                    Ok((program, plan)) => {
                        let old = engine.build();
                        let placed = |program: &Program, plan: &Plan| {
                            app_stores(program, Some(plan)).map(|s| s.placement)
                        };
                        match placed(&program, &plan) {
                            Ok(p) if Ok(&p) == placed(old.program, old.plan).as_ref() => {}
                            Ok(_) => {
                                engine.listing.note(
                                    "reload: an action's record store changed; restart `jadpo dev` to run it there",
                                );
                                continue;
                            }
                            Err(why) => {
                                engine.listing.note(&format!("reload refused: {why}"));
                                continue;
                            }
                        }
                        if let Some(why) = tables_change((old.program, old.plan), (&program, &plan)) {
                            engine.listing.note(&format!(
                                "reload: {why}; restart `jadpo dev` to set the store up for them"
                            ));
                            continue;
                        }
                        // The engine and the providers keep the values read
                        // at start: a build reading others would fault.
                        match from.read(&program) {
                            Ok((_, _, config)) if config != engine.config => {
                                engine.listing.note(
                                    "reload: the config values changed; restart `jadpo dev` to read them",
                                );
                                continue;
                            }
                            Ok((_, prepared, _))
                                if fakes_text(&program, &prepared) != from.started_fakes =>
                            {
                                engine.listing.note(
                                    "reload: the fixture's fakes changed; restart `jadpo dev` to answer with them",
                                );
                                continue;
                            }
                            Ok(_) => {}
                            Err(why) => {
                                engine.listing.note(&format!("reload refused: {why}"));
                                continue;
                            }
                        }
                        let id = plan.build_id.get(..12).unwrap_or("").to_string();
                        let stranded = stranded(&engine, &plan);
                        engine.replace_build(Build::new(program, plan));
                        engine.listing.note(&format!("reloaded: build {id}"));
                        say_stranded(&*engine.listing, &stranded);
                    }
                    Err(text) => {
                        engine.listing.note(&text);
                        engine
                            .listing
                            .note("reload failed: the last good build keeps running");
                    }
                }
            }
        })
}

/// The unfinished records a new build would hold as diverged, as lines
/// naming each with its action and the step where it leaves the build.
fn stranded(engine: &Engine, plan: &Plan) -> Vec<String> {
    let Ok(records) = engine.store.unfinished() else {
        return vec!["(the store's unfinished records could not be read)".into()];
    };
    let mut lines = Vec::new();
    for (id, rec) in &records {
        let Ok(Some(d)) = engine.store.delivery(id) else {
            continue;
        };
        match rec.resume_under(plan, &d.action) {
            Resume::Same | Resume::Prefix => {}
            Resume::NoAction => {
                lines.push(format!("{id}  {}: the build has no such action", d.action))
            }
            Resume::Held { step, operation } => lines.push(format!(
                "{id}  {}: step {step} (`{operation}`) is no step there in the build",
                d.action
            )),
        }
    }
    lines
}

/// Says which records a reload strands (design section 13: from the
/// same verdict as `runs unfinished --build`).
fn say_stranded(listing: &dyn Listen, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let n = lines.len();
    listing.note(&format!(
        "WARN this build holds {n} unfinished record{} as diverged; {} resume{} only under a build whose steps {} match:",
        if n == 1 { "" } else { "s" },
        if n == 1 { "it" } else { "they" },
        if n == 1 { "s" } else { "" },
        if n == 1 { "its" } else { "their" },
    ));
    for l in lines {
        listing.note(&format!("  {l}"));
    }
    listing.note("  undo the change to resume them, or settle each: jadpo deliveries show ID, then retry or abandon");
}

/// What changes when the app's sources change: each `.jadpo` and `.yaml`
/// file's path, size and time, outside hidden folders and `.jadpo/`.
fn stamp(dir: &Path) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut visited = 0;
    while let Some(d) = stack.pop() {
        visited += 1;
        if visited > 10_000 {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    stack.push(path);
                }
            } else if name.ends_with(".jadpo") || name.ends_with(".yaml") {
                out.push((path, meta.len(), meta.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

/// Providers that send every call with a binding over HTTP to a fake
/// provider server on loopback answering from `fake` (as production would
/// send it to the provider), and answer the calls without one in process.
pub(crate) fn behind_fake_server(
    fake: Arc<SharedFake>,
    program: &'static jadpo_compiler::ir::Program,
    config: &BTreeMap<Name, Value>,
) -> Result<(HttpProviders, String), String> {
    let server = jadpo_server::fake_server::start(fake.clone(), program)?;
    let providers = HttpProviders::new(config.clone())
        .with_fake_server(server.url())
        .with_unbound(fake);
    Ok((providers, server.url()))
}

/// The line that says where the fake provider server answers (its
/// `/__jadpo/effects` lists what the fakes did).
pub(crate) fn fake_server_line(url: &str) -> String {
    format!("fake providers at {url} (effects at {url}/__jadpo/effects)")
}

/// The fixture whose fakes answer: `--fakes NAME`, else `dev`.
pub(crate) fn fakes_fixture(
    program: &Program,
    named: Option<&str>,
) -> Result<jadpo_compiler::ir::test::FixtureId, String> {
    let name = named.unwrap_or("dev");
    let found = program
        .fixtures
        .iter()
        .position(|f| f.name.as_str() == name)
        .map(|i| jadpo_compiler::ir::test::FixtureId(i as u32));
    match (found, named) {
        (Some(id), _) => Ok(id),
        (None, Some(_)) => Err(format!("the app has no fixture `{name}` for --fakes")),
        (None, None) => Err("the app has no fixture `dev`".into()),
    }
}

/// The app's config values: the fixture's, then the environment's by
/// each entry's `binding:`, then its `default:`. With fakes answering,
/// an entry that only gives a provider setting may be left unset.
pub(crate) fn config_values(
    program: &Program,
    prepared: Option<&Prepared>,
    env: &Env,
    faked: bool,
) -> Result<BTreeMap<Name, Value>, String> {
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    // With fakes answering, an entry that only gives a provider setting
    // (an API key) is never read.
    let unread = if faked {
        provider_only(program)
    } else {
        Vec::new()
    };
    for entry in &program.config {
        if let Some(v) = prepared.and_then(|p| p.config.get(&entry.name)) {
            out.insert(entry.name, v.clone());
            continue;
        }
        let text = entry
            .binding
            .as_deref()
            .and_then(|b| env.get(b))
            .or_else(|| entry.default.clone());
        match text {
            Some(t) => {
                let v = config_value(&entry.ty, &t).ok_or_else(|| {
                    format!(
                        "config `{}`: `{}` is not a value of its type",
                        entry.name,
                        redact(entry.secret, &t)
                    )
                })?;
                out.insert(entry.name, v);
            }
            None if matches!(entry.ty, Ty::Optional(_)) => {
                out.insert(entry.name, Value::None);
            }
            None if unread.contains(&entry.name) => {}
            None => missing.push(match &entry.binding {
                Some(b) => format!("`{}` (set {b})", entry.name),
                None => format!("`{}`", entry.name),
            }),
        }
    }
    if !missing.is_empty() {
        return Err(format!("config without a value: {}", missing.join(", ")));
    }
    Ok(out)
}

/// The config entries that give provider settings and that no action or
/// function reads, nor the steps key.
fn provider_only(program: &Program) -> Vec<Name> {
    let mut read: Vec<Name> = program
        .actions
        .iter()
        .flat_map(|a| a.reads.config.iter().copied())
        .chain(
            program
                .functions
                .iter()
                .flat_map(|f| f.reads.config.iter().copied()),
        )
        .chain(program.app.encryption_key.as_ref().map(|k| k.name))
        .collect();
    read.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    program
        .app
        .providers
        .iter()
        .flat_map(|p| p.given.iter().map(|g| g.config))
        .filter(|n| !read.iter().any(|r| r == n))
        .collect()
}

fn redact(secret: bool, text: &str) -> String {
    if secret {
        "(secret)".into()
    } else {
        text.to_string()
    }
}

fn config_value(ty: &Ty, text: &str) -> Option<Value> {
    let inner = match ty.unbounded() {
        Ty::Optional(t) => t.unbounded().clone(),
        other => other.clone(),
    };
    Some(match inner {
        Ty::Prim(Prim::Int) => Value::Int(text.trim().parse().ok()?),
        Ty::Prim(Prim::Bool) => Value::Bool(text.trim().parse().ok()?),
        Ty::Prim(Prim::Decimal) => Value::Decimal(text.trim().parse().ok()?),
        _ => Value::text(text),
    })
}

/// The app's stores, opened for `jadpo dev`.
struct DevStores {
    store: Arc<dyn Store>,
    /// What setting them up did, a line each.
    setup: Vec<String>,
    /// Where they are, as the first line says it: a store's file, or the
    /// Postgres it was moved to (without the password a URL may carry).
    places: String,
}

/// The store's file, set up for the build.
fn open_store(
    dir: &str,
    args: &DevArgs,
    program: &Program,
    plan: &Plan,
) -> Result<DevStores, String> {
    let stores = app_stores(program, Some(plan))?;
    if let Some((other, _)) = args.stores.iter().find(|(n, _)| !stores.names.contains(n)) {
        return Err(format!(
            "--store names `{other}`, which is no store of the app; its stores are {}",
            stores.names.join(", ")
        ));
    }
    if args.reset {
        if let Some((name, url)) = args.stores.last() {
            return Err(format!(
                "--reset removes the SQLite file only; store `{name}` is at {url}: empty it there, or drop --store"
            ));
        }
        let _ = std::fs::remove_file(args.journal_path(dir));
    }
    // Every store not moved to Postgres lives in the one dev file, each
    // under its prefix (design section 14).
    let db = args.db_path(dir);
    if args.reset {
        for suffix in ["", "-wal", "-shm", ".lock"] {
            let mut p = db.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
    if let Some(parent) = db.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let bindings = stores
        .names
        .iter()
        .map(|name| {
            let schema = store_schema(program, Some(plan), name);
            let url = match args.stores.iter().rev().find(|(n, _)| n == name) {
                Some((_, url)) => url.clone(),
                None => format!("sqlite:{}", db.display()),
            };
            (url, schema)
        })
        .collect();
    let options = jadpo_server::store::OpenOptions {
        sqlite: Options {
            full_sync: false,
            ..Options::default()
        },
        ..jadpo_server::store::OpenOptions::default()
    };
    let opened = jadpo_server::store::open_each(bindings, options).map_err(|e| {
        let hint = match e.kind {
            jadpo_runtime::store::ErrorKind::Incompatible => {
                "\n  the store holds data of an earlier build: `jadpo db status` lists every change this build needs, and `jadpo dev --reset` starts the store empty"
            }
            _ => "",
        };
        format!("{e}{hint}")
    })?;
    Ok(DevStores {
        setup: opened.setup_lines(),
        places: store_places(dir, args, &stores),
        store: stores.join(opened.stores),
    })
}

/// Where the stores are, as the first line says it: a store's file, or
/// the Postgres it was moved to (without the password a URL may carry);
/// with several, each by name.
fn store_places(dir: &str, args: &DevArgs, stores: &AppStores) -> String {
    let moved = |name: &str| args.stores.iter().rev().find(|(n, _)| n == name);
    let file = args.db_path(dir).display().to_string();
    let local: Vec<&str> = stores
        .names
        .iter()
        .map(String::as_str)
        .filter(|n| moved(n).is_none())
        .collect();
    let mut places: Vec<String> = match &local[..] {
        [] => Vec::new(),
        [_] if stores.names.len() == 1 => vec![file],
        names => vec![format!("{} at {file}", names.join(" and "))],
    };
    for name in &stores.names {
        if let Some((_, url)) = moved(name) {
            places.push(format!("{name} on {}", without_password(url)));
        }
    }
    places.join(", ")
}

/// `postgres://user:secret@host/db` as `postgres://user:***@host/db`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("{scheme}://{name}:***@{host}")
        }
        _ => url.to_string(),
    }
}

/// An app's stores (design section 14.5): their names, and where each
/// action keeps its record and each entity its rows.
pub(crate) struct AppStores {
    pub(crate) names: Vec<String>,
    pub(crate) placement: Placement,
}

impl AppStores {
    /// The stores opened, in the order of [`AppStores::names`], as one
    /// store.
    pub(crate) fn join(&self, mut stores: Vec<Arc<dyn Store>>) -> Arc<dyn Store> {
        match stores.len() {
            1 => stores.remove(0),
            _ => Arc::new(Several::new(stores, &self.placement)),
        }
    }
}

/// Store `name`'s schema for a build: its entities and, with the plan,
/// one index per queried field list.
pub(crate) fn store_schema(program: &Program, plan: Option<&Plan>, name: &str) -> Schema {
    let schema = Schema::of(program, name, &program.app.name);
    match plan {
        Some(plan) => schema.with_queries(&plan.queries),
        None => schema,
    }
}

/// The app's stores (`primary` when nothing names one). Refused: an
/// action that writes entities of two stores (its commit could not be one
/// transaction).
pub(crate) fn app_stores(program: &Program, plan: Option<&Plan>) -> Result<AppStores, String> {
    let mut names = store_names(program);
    if names.is_empty() {
        names.push("primary".into());
    }
    let default = program
        .app
        .events_store
        .map(|(s, _)| s.as_str().to_string())
        .or_else(|| names.iter().find(|n| *n == "primary").cloned())
        .unwrap_or_else(|| names[0].clone());
    let mut placement = Placement {
        default,
        ..Placement::default()
    };
    for (id, e) in program.entities.iter_enumerated() {
        // The checker has every entity of an app name its store
        // (`name.missing_setting`); a test's program may name none.
        let store = e
            .store
            .map_or_else(|| placement.default.clone(), |s| s.as_str().to_string());
        placement.entities.insert(id, store);
    }
    for action in plan.map_or(&[][..], |p| &p.actions[..]) {
        if action.stores_written.len() > 1 {
            return Err(two_stores(program, action));
        }
        if let Some(r) = &action.record_store {
            placement
                .records
                .insert(action.name.clone(), r.store.clone());
        }
    }
    Ok(AppStores { names, placement })
}

/// Why an action writing two stores cannot run: its entities by store.
fn two_stores(program: &Program, action: &jadpo_plan::ActionPlan) -> String {
    let by_store: Vec<String> = action
        .stores_written
        .iter()
        .map(|store| {
            let entities: Vec<&str> = program
                .entities
                .iter()
                .filter(|e| e.store.is_some_and(|s| s.as_str() == store))
                .map(|e| e.qualified.as_str())
                .collect();
            format!("{store} ({})", entities.join(", "))
        })
        .collect();
    format!(
        "action `{}` ({}) writes entities of {} stores: {}. Its commit cannot be one transaction across stores: make it write one store, and emit an event whose subscriber writes the other",
        action.name,
        action.site,
        action.stores_written.len(),
        by_store.join(" and ")
    )
}

pub(crate) fn store_names(program: &Program) -> Vec<String> {
    let mut names: Vec<String> = program
        .entities
        .iter()
        .filter_map(|e| e.store.map(|s| s.as_str().to_string()))
        .chain(
            program
                .app
                .events_store
                .map(|(s, _)| s.as_str().to_string()),
        )
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Variables from `--env-file`, then the process's.
pub(crate) struct Env {
    file: BTreeMap<String, String>,
}

impl Env {
    pub(crate) fn read(path: Option<&str>) -> Result<Env, String> {
        let mut file = BTreeMap::new();
        if let Some(path) = path {
            let text =
                read_small(Path::new(path)).map_err(|e| format!("--env-file {path}: {e}"))?;
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let line = line.strip_prefix("export ").unwrap_or(line);
                let Some((k, v)) = line.split_once('=') else {
                    return Err(format!("--env-file {path}:{}: expected NAME=value", i + 1));
                };
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|x| x.strip_suffix('"'))
                    .unwrap_or(v);
                file.insert(k.trim().to_string(), v.to_string());
            }
        }
        Ok(Env { file })
    }

    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.file
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

/// A small regular file's text (an env file is at most 1 MiB).
fn read_small(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > 1024 * 1024 {
        return Err("it is larger than 1 MiB".into());
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}
