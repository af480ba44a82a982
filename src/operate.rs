//! The operator commands (design `server.md` section 19): `jadpo
//! deliveries list|show|retry|abandon` and `jadpo runs unfinished --build
//! PLAN`. They read the store directly, so they work while no server
//! runs: `--store URL`, else `JADPO_STORE_<NAME>`, else the app's
//! `jadpo dev` file. Ids may be shortened to a unique prefix. Answers
//! show only when the steps key is set (`--steps-key-env`, `STEPS_KEY`).

use std::sync::Arc;

use jadpo_compiler::ir::Program;
use jadpo_compiler::load::FsLoader;
use jadpo_compiler::resolve::Lowering;
use jadpo_plan::{ActionPlan, Plan};
use jadpo_runtime::attempt::Recorded;
use jadpo_runtime::record::{Doubt, Resume, RowState, Sealer, StoredRecord};
use jadpo_runtime::store::schema::Schema;
use jadpo_runtime::store::{DeliveryRow, DeliveryState, ListFilter, Operated, Source, Store};
use jadpo_runtime::value::{instant_text, Instant};
use jadpo_server::store::sqlite::Options;
use serde_json::json;

use crate::cli::{DeliveriesArgs, DeliveriesCommand, OperatorStore, UnfinishedArgs};

/// What the commands read: the app's program and plan, and its store.
struct Opened {
    program: Program,
    plan: Option<Plan>,
    store: Arc<dyn Store>,
    sealer: Option<Sealer>,
}

/// Store `name`'s schema for operators: they never change the app's
/// tables, only the runtime's are read (and made, for a store that has
/// none yet).
fn operator_schema(program: &Program, name: &str) -> Schema {
    let mut schema = Schema::of(program, name, &program.app.name);
    schema.entities.clear();
    schema.indexes.clear();
    schema
}

/// An app's program and plan, and the URL of each of its stores: what
/// the commands that read stores directly start from.
pub(crate) struct AppAt {
    pub program: Program,
    pub plan: Option<Plan>,
    pub stores: crate::dev::AppStores,
    /// Each store's URL, in the order of `stores.names`.
    pub urls: Vec<String>,
}

/// The app `at` names, checked, and where its stores are: `--store URL`,
/// else `JADPO_STORE_<NAME>`, else the app's `jadpo dev` file (which
/// must exist: an operator never makes a store).
pub(crate) fn app_at(at: &OperatorStore) -> Result<AppAt, String> {
    let dir = match crate::locate::locate(&at.app)? {
        crate::locate::Project::App(dir) | crate::locate::Project::Neither(dir) => dir,
        crate::locate::Project::Package(dir) => {
            return Err(format!(
                "`{dir}` is a package; operators work on an app's store"
            ))
        }
    };
    let outcome = crate::check::check_app_lowering(
        &FsLoader,
        &dir,
        jadpo_checker::Wanted::Whole,
        Lowering::Code,
    );
    let program = outcome
        .program
        .ok_or_else(|| format!("the app at `{dir}` cannot be checked"))?;
    let plan = outcome.plan.and_then(|p| p.app().cloned());
    let stores = crate::dev::app_stores(&program, plan.as_ref())?;
    if at.store.is_some() && stores.names.len() > 1 {
        return Err(format!(
            "--store gives one URL, and the app has {} stores ({}): set JADPO_STORE_<NAME> for each instead",
            stores.names.len(),
            stores.names.join(", ")
        ));
    }
    let dev_db = std::path::Path::new(&dir).join(".jadpo").join("dev.sqlite");
    let mut urls = Vec::with_capacity(stores.names.len());
    for name in &stores.names {
        let var = format!("JADPO_STORE_{}", name.to_ascii_uppercase());
        let url = match (&at.store, std::env::var(&var)) {
            (Some(url), _) => url.clone(),
            (None, Ok(url)) => url,
            (None, Err(_)) if dev_db.is_file() => format!("sqlite:{}", dev_db.display()),
            (None, Err(_)) => {
                return Err(format!(
                    "no store `{name}` to read: give --store URL, set {var}, or run `jadpo dev` in the app first"
                ))
            }
        };
        let path = jadpo_server::store::sqlite_path(&url);
        if let Some(path) = path.filter(|p| !std::path::Path::new(p).is_file()) {
            return Err(format!("there is no store at {path}"));
        }
        urls.push(url);
    }
    Ok(AppAt {
        program,
        plan,
        stores,
        urls,
    })
}

fn open(at: &OperatorStore) -> Result<Opened, String> {
    let app = app_at(at)?;
    let bindings = app
        .urls
        .iter()
        .zip(&app.stores.names)
        .map(|(url, name)| (url.clone(), operator_schema(&app.program, name)))
        .collect();
    let options = jadpo_server::store::OpenOptions {
        sqlite: Options {
            exclusive: false,
            ..Options::default()
        },
        ..jadpo_server::store::OpenOptions::default()
    };
    let opened = jadpo_server::store::open_each(bindings, options).map_err(|e| e.to_string())?;
    let store = app.stores.join(opened.stores);
    let sealer = std::env::var(&at.steps_key_env)
        .ok()
        .filter(|k| !k.is_empty())
        .map(|k| {
            let previous = std::env::var(format!("{}_PREVIOUS", at.steps_key_env)).ok();
            Sealer::rotating(&k, previous.as_deref())
        });
    Ok(Opened {
        program: app.program,
        plan: app.plan,
        store,
        sealer,
    })
}

/// The OS user, for an item's `closed_by`.
fn operator() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "an operator".into())
}

pub fn deliveries(args: &DeliveriesArgs) -> u8 {
    let at = match &args.command {
        DeliveriesCommand::List { at, .. }
        | DeliveriesCommand::Show { at, .. }
        | DeliveriesCommand::Retry { at, .. }
        | DeliveriesCommand::Forget { at, .. }
        | DeliveriesCommand::Abandon { at, .. } => at,
    };
    let opened = match open(at) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    let result = match &args.command {
        DeliveriesCommand::List {
            not_done,
            state,
            action,
            since,
            limit,
            format,
            ..
        } => list(
            &opened,
            *not_done,
            state.as_deref(),
            action.as_deref(),
            since.as_deref(),
            *limit,
            format.json(),
        ),
        DeliveriesCommand::Show { id, format, .. } => show(&opened, id, format.json()),
        DeliveriesCommand::Retry { id, not_done, .. } => retry(&opened, id, *not_done),
        DeliveriesCommand::Abandon { id, reason, .. } => abandon(&opened, id, reason),
        DeliveriesCommand::Forget { id, .. } => forget(&opened, id),
    };
    match result {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err((why, status)) => {
            eprintln!("error: {why}");
            status
        }
    }
}

type Done = Result<String, (String, u8)>;

fn store_error(e: impl std::fmt::Display) -> (String, u8) {
    (e.to_string(), 2)
}

fn now() -> Instant {
    jadpo_server::store::clock::now()
}

fn age(since: Instant) -> String {
    let secs = ((now().0 - since.0) / 1_000_000_000).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn entry_words(d: &DeliveryRow) -> String {
    match &d.source {
        Source::Event { .. } => format!("subscriber {}", d.subscriber.as_deref().unwrap_or("?")),
        Source::Route { route, .. } => format!("route {route}"),
        Source::Schedule { name, .. } => format!("schedule {name}"),
        Source::Direct => "run by name".into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn list(
    o: &Opened,
    not_done: bool,
    state: Option<&str>,
    action: Option<&str>,
    since: Option<&str>,
    limit: usize,
    json: bool,
) -> Done {
    let state = match state {
        Some(s) => Some(DeliveryState::parse(s).ok_or_else(|| {
            let all: Vec<&str> = DeliveryState::ALL.iter().map(|s| s.as_str()).collect();
            (
                format!("`{s}` is not a state: the states are {}", all.join(", ")),
                2,
            )
        })?),
        None => None,
    };
    let since = match since {
        Some(text) => Some(Instant(
            now().0 - i128::from(crate::cli::duration_ms(text).map_err(|e| (e, 2))?) * 1_000_000,
        )),
        None => None,
    };
    let filter = ListFilter {
        not_done,
        state,
        action: action.map(str::to_string),
        since,
        limit,
    };
    let rows = o.store.list(&filter).map_err(store_error)?;
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|d| {
                json!({
                    "id": d.id,
                    "action": d.action,
                    "entry": entry_words(d),
                    "state": d.state.as_str(),
                    "steps": d.steps.len(),
                    "created_at": instant_text(d.created_at),
                    "reason": d.reason,
                })
            })
            .collect();
        let doc = json!({ "format": 1, "deliveries": items });
        return Ok(format!("{doc}\n"));
    }
    let mut out = String::new();
    for d in &rows {
        out.push_str(&format!(
            "{}  {:<24} {:<36} {:<16} {} steps  {} ago\n",
            d.id,
            d.action,
            entry_words(d),
            d.state.as_str(),
            d.steps.len(),
            age(d.created_at)
        ));
    }
    if rows.is_empty() {
        out.push_str("no deliveries\n");
    }
    Ok(out)
}

/// The one id a prefix names.
fn resolve(o: &Opened, prefix: &str) -> Result<String, (String, u8)> {
    let found = o.store.ids_starting(prefix, 3).map_err(store_error)?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err((format!("no delivery's id starts with `{prefix}`"), 1)),
        many => Err((
            format!(
                "`{prefix}` names several deliveries ({}...): give more of the id",
                many.join(", ")
            ),
            1,
        )),
    }
}

/// A step as `deliveries show` lists it.
struct Line {
    position: u32,
    operation: String,
    state: &'static str,
    at: Option<Instant>,
    note: String,
}

fn hhmmss(i: Instant) -> String {
    instant_text(i).get(11..19).unwrap_or("").to_string()
}

fn answer_id(
    o: &Opened,
    delivery: &str,
    position: u32,
    sealed: &jadpo_runtime::record::Sealed,
) -> String {
    let Some(sealer) = &o.sealer else {
        return "(set the steps key to see answers)".into();
    };
    let Some(plain) = sealer.open(delivery, position, sealed) else {
        return "(the steps key does not open this answer)".into();
    };
    let Some(rec) = Recorded::from_bytes(&plain) else {
        return String::new();
    };
    let body: serde_json::Value = serde_json::from_slice(&rec.body).unwrap_or_default();
    let text = answer_text(&body);
    if rec.failed || rec.misconfigured {
        format!("failed {}: {}", rec.status, short_text(&text, 40))
    } else {
        short_text(&text, 12)
    }
}

/// What names an answer: its `id`, an error's `code`, else its first value.
fn answer_text(body: &serde_json::Value) -> String {
    let named = |v: &serde_json::Value| {
        v.get("id")
            .or_else(|| v.get("code"))
            .or_else(|| v.get("error").and_then(|e| e.get("code")))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    if let Some(text) = body.as_str() {
        return text.to_string();
    }
    named(body)
        .or_else(|| {
            body.as_object()
                .and_then(|m| m.values().next())
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        })
        .unwrap_or_default()
}

fn short_text(text: &str, max: usize) -> String {
    let short: String = text.chars().take(max).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}

fn lines(
    o: &Opened,
    d: &DeliveryRow,
    rec: Option<&StoredRecord>,
    plan: Option<&ActionPlan>,
) -> Vec<Line> {
    let mut out = Vec::new();
    match rec {
        Some(rec) => {
            for s in &rec.steps {
                let (state, note) = match &s.state {
                    RowState::Answered(sealed) => {
                        ("answered", answer_id(o, &d.id, s.position, sealed))
                    }
                    RowState::Dispatched => ("dispatched", String::new()),
                    RowState::Sent { doubt } => ("no answer", doubt_note(o, s, *doubt, plan)),
                };
                out.push(Line {
                    position: s.position,
                    operation: s.operation.clone(),
                    state,
                    at: Some(s.sent_at),
                    note,
                });
            }
        }
        None => {
            for s in &d.steps {
                out.push(Line {
                    position: s.position,
                    operation: s.operation.clone(),
                    state: match s.state.as_str() {
                        "answered" | "replayed" => "answered",
                        "in doubt" | "sent" => "no answer",
                        _ => "sent",
                    },
                    at: Some(s.sent_at),
                    note: String::new(),
                });
            }
        }
    }
    // The plan's later steps on the way the record went.
    if let Some(plan) = plan {
        let reached = out.len() as u32;
        let mut later: Vec<&jadpo_plan::StepPlan> = plan
            .steps
            .iter()
            .filter(|s| s.positions.first > reached)
            .collect();
        later.sort_by_key(|s| s.positions.first);
        let mut next = reached + 1;
        for s in later {
            if s.positions.first == next {
                out.push(Line {
                    position: next,
                    operation: s.operation.clone(),
                    state: "not reached",
                    at: None,
                    note: String::new(),
                });
                next += 1;
            }
        }
    }
    out
}

fn provider_name(operation: &str) -> String {
    let package = operation.split('.').next().unwrap_or(operation);
    let mut c = package.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn doubt_note(
    _o: &Opened,
    s: &jadpo_runtime::record::StepRow,
    doubt: Doubt,
    plan: Option<&ActionPlan>,
) -> String {
    let window = plan
        .and_then(|p| p.steps.iter().find(|st| st.operation == s.operation))
        .and_then(|st| st.window_ms);
    match (doubt, window) {
        (Doubt::ServerError, Some(w)) => {
            let until = Instant(s.sent_at.0 + i128::from(w) * 1_000_000);
            let provider = provider_name(&s.operation);
            if now().0 < until.0 {
                format!(
                    "{provider} answered 500 and repeats it for this key until {}",
                    until_words(s.sent_at, until)
                )
            } else {
                // Past the window the key no longer guards a resend.
                let when = instant_text(until)
                    .get(..16)
                    .unwrap_or("")
                    .replace('T', " ");
                format!(
                    "{provider} answered 500; it kept that answer for this key until {when} UTC, so a resend under it may act again"
                )
            }
        }
        (Doubt::ServerError, None) => format!("{} answered 500", provider_name(&s.operation)),
        (Doubt::Unknown, _) if s.key_generation > 0 => format!(
            "no answer under its new key (generation {}, from `retry --not-done`)",
            s.key_generation
        ),
        (Doubt::Unknown, _) => "sent; no answer came back".into(),
    }
}

/// `10:02`, `10:02 tomorrow`, or `2026-01-17 10:02`, from `from`'s day.
fn until_words(from: Instant, until: Instant) -> String {
    let (a, b) = (instant_text(from), instant_text(until));
    let hhmm = b.get(11..16).unwrap_or("").to_string();
    let day = |t: &str| t.get(..10).unwrap_or("").to_string();
    let next_day = instant_text(Instant(from.0 + 86_400 * 1_000_000_000));
    if day(&a) == day(&b) {
        hhmm
    } else if day(&next_day) == day(&b) {
        format!("{hhmm} tomorrow")
    } else {
        format!("{} {hhmm}", day(&b))
    }
}

fn outcome_words(d: &DeliveryRow, in_doubt: Option<u32>, total: u32) -> String {
    let why = d.reason.as_deref().unwrap_or("");
    // The runtime's "was held as diverged at ..." reads "Diverged at ...".
    let why = why
        .strip_prefix("was held as ")
        .or_else(|| why.strip_prefix("was "))
        .unwrap_or(why);
    match (d.state, in_doubt) {
        (DeliveryState::OutcomeUnknown, Some(step)) => {
            format!("Outcome unknown at step {step} of {total}")
        }
        (DeliveryState::Completed, _) => "Completed".into(),
        (s, _) if why.is_empty() => capitalised(s.as_str()),
        // `failed with X` reads as the outcome itself: "Failed with X".
        (s, _) if why.starts_with(&s.as_str().replace('_', " ")) => capitalised(why),
        (s, _) => format!("{}: {why}", capitalised(s.as_str())),
    }
}

fn capitalised(state: &str) -> String {
    let text = state.replace('_', " ");
    let mut c = text.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => text,
    }
}

fn show(o: &Opened, prefix: &str, json: bool) -> Done {
    let id = resolve(o, prefix)?;
    let d = o
        .store
        .delivery(&id)
        .map_err(store_error)?
        .ok_or_else(|| (format!("no delivery {id}"), 1))?;
    let rec = o.store.record(&id).map_err(store_error)?;
    let plan = o.plan.as_ref().and_then(|p| p.action(&d.action));
    let doubt = jadpo_runtime::store::in_doubt(rec.as_ref());
    let lines = lines(o, &d, rec.as_ref(), plan);
    let total = lines.len() as u32;
    let outcome = outcome_words(&d, doubt, total);
    let header = format!(
        "{}.{}, from {}",
        o.program.app.name,
        d.action,
        entry_words(&d)
    );
    let answers: Vec<String> = lines
        .iter()
        .filter(|l| l.state == "answered" && !l.note.is_empty())
        .filter(|l| !l.note.starts_with('(') && !l.note.starts_with("failed "))
        .map(|l| l.note.clone())
        .collect();
    let mut commands: Vec<(String, String)> = Vec::new();
    let mut check = None;
    if let (DeliveryState::OutcomeUnknown, Some(step)) = (d.state, doubt) {
        let op = lines
            .iter()
            .find(|l| l.position == step)
            .map(|l| l.operation.clone())
            .unwrap_or_default();
        let so_far = if answers.is_empty() {
            String::new()
        } else {
            format!(" (answers so far: {})", answers.join(", "))
        };
        // The operation's own `check:` text, else its name.
        let what = o
            .program
            .operations
            .iter()
            .find(|x| x.qualified == op)
            .and_then(|x| x.check.clone())
            .unwrap_or_else(|| format!("whether `{op}` acted"));
        check = Some(format!("Check in {} {what}{so_far}.", provider_name(&op)));
        commands.push((
            "It wasn't:".into(),
            format!("jadpo deliveries retry {id} --not-done"),
        ));
        commands.push((
            "It was:".into(),
            format!(
                "jadpo deliveries abandon {id}, then tidy up in {}",
                provider_name(&op)
            ),
        ));
    } else if d.state.ended()
        && !matches!(d.state, DeliveryState::Completed | DeliveryState::Abandoned)
    {
        // A held record resumes only under a build whose steps it matches.
        let again = if d.state == DeliveryState::Diverged {
            "Once a build matches its steps:"
        } else {
            "Run it again:"
        };
        commands.push((again.into(), format!("jadpo deliveries retry {id}")));
        commands.push((
            "Give it up:".into(),
            format!("jadpo deliveries abandon {id} --reason TEXT"),
        ));
    }
    if json {
        let steps: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| {
                json!({
                    "position": l.position,
                    "operation": l.operation,
                    "state": l.state,
                    "at": l.at.map(instant_text),
                    "note": l.note,
                })
            })
            .collect();
        let doc = json!({
            "format": 1,
            "id": id,
            "action": d.action,
            "entry": entry_words(&d),
            "state": d.state.as_str(),
            "outcome": outcome,
            "steps": steps,
            "check": check,
            "commands": commands.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
        });
        return Ok(format!("{doc}\n"));
    }
    let mut out = format!("{header}\n{outcome}\n");
    for l in &lines {
        let at = l.at.map(hhmmss).unwrap_or_default();
        out.push_str(&format!(
            "  {}  {:<32} {:<12} {:<8}  {}\n",
            l.position, l.operation, l.state, at, l.note
        ));
    }
    if let Some(c) = check {
        out.push_str(&format!("{c}\n"));
    }
    let width = commands.iter().map(|(say, _)| say.len()).max().unwrap_or(0) + 1;
    for (say, cmd) in &commands {
        out.push_str(&format!("  {say:<width$} {cmd}\n"));
    }
    let trimmed: Vec<&str> = out.lines().map(str::trim_end).collect();
    Ok(format!("{}\n", trimmed.join("\n")))
}

fn retry(o: &Opened, prefix: &str, not_done: bool) -> Done {
    let id = resolve(o, prefix)?;
    let route = o
        .store
        .delivery(&id)
        .map_err(store_error)?
        .is_some_and(|d| matches!(d.source, Source::Route { .. }));
    // A route's run is resumed by its client, never by the dispatcher: the
    // answer is the client's to read.
    let who = if route {
        "the client's next request with its Idempotency-Key runs it"
    } else {
        "a running server takes it within a second"
    };
    match o
        .store
        .retry(&id, not_done, &operator(), now())
        .map_err(store_error)?
    {
        Operated::Done => Ok(format!(
            "{id} is available again{}: {who}\n",
            if not_done {
                ", its step in doubt under a new key"
            } else {
                ""
            }
        )),
        Operated::Refused(why) => Err((why, 1)),
    }
}

fn abandon(o: &Opened, prefix: &str, reason: &str) -> Done {
    let id = resolve(o, prefix)?;
    let d = o
        .store
        .delivery(&id)
        .map_err(store_error)?
        .ok_or_else(|| (format!("no delivery {id}"), 1))?;
    // A route's open claim answers 500 `abandoned` from now on, sealed as
    // the server seals its answers (without the steps key, the claim
    // answers `needs_operator` instead).
    let stored = match (&d.source, &o.sealer) {
        (
            Source::Route {
                route,
                principal,
                key,
            },
            Some(sealer),
        ) => {
            let answer = jadpo_server::http::answer::Answer::problem_with(
                500,
                "abandoned",
                "The run was abandoned by an operator",
                json!({ "delivery": id }),
            );
            let place = format!("{route}\n{principal}\n{key}");
            Some(answer.stored(|body| {
                let sealed = sealer.seal(&place, u32::MAX, body);
                let mut out = sealed.nonce.to_vec();
                out.extend_from_slice(&sealed.ciphertext);
                out
            }))
        }
        _ => None,
    };
    match o
        .store
        .abandon(&id, reason, &operator(), stored.as_ref(), now())
        .map_err(store_error)?
    {
        Operated::Done => Ok(format!("{id} is abandoned; its steps are kept\n")),
        Operated::Refused(why) => Err((why, 1)),
    }
}

fn forget(o: &Opened, prefix: &str) -> Done {
    let id = resolve(o, prefix)?;
    match o.store.forget(&id).map_err(store_error)? {
        Operated::Done => Ok(format!(
            "{id} is forgotten: its row, record and item are gone\n"
        )),
        Operated::Refused(why) => Err((why, 1)),
    }
}

/// `jadpo runs unfinished --build PLAN`: each unfinished record, and
/// whether the plan resumes it or holds it as diverged; exit 1 when any
/// would be held.
pub fn unfinished(args: &UnfinishedArgs) -> u8 {
    let o = match open(&args.at) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    let text = match crate::plan_diff::read_plan_file(&args.build) {
        Ok(t) => t,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    let plan: Plan = match serde_json::from_str(&text) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: `{}` is not a plan of this jadpo ({e})", args.build);
            return 2;
        }
    };
    let records = match o.store.unfinished() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut held = 0;
    let mut out = String::new();
    for (id, rec) in &records {
        let action = o
            .store
            .delivery(id)
            .ok()
            .flatten()
            .map(|d| d.action)
            .unwrap_or_default();
        let verdict = judge(&plan, &action, rec);
        if verdict.starts_with("held") {
            held += 1;
        }
        out.push_str(&format!(
            "{id}  {action}  {} steps  {verdict}\n",
            rec.steps.len()
        ));
    }
    out.push_str(&format!(
        "{} unfinished record{}, {held} would be held as diverged by build {}\n",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        plan.build_id.get(..12).unwrap_or("")
    ));
    print!("{out}");
    u8::from(held > 0)
}

/// How `runs unfinished` words a build's verdict on a record.
fn judge(plan: &Plan, action: &str, rec: &StoredRecord) -> String {
    match rec.resume_under(plan, action) {
        Resume::Same => "resumes".into(),
        Resume::Prefix => "resumes (its steps so far are the build's)".into(),
        Resume::NoAction => format!("held as diverged: the build has no action `{action}`"),
        Resume::Held { step, operation } => {
            format!("held as diverged at step {step} (`{operation}` is no step there in the build)")
        }
    }
}
