//! `jadpo serve BUNDLE_DIR` (design `server.md` section 13): runs a build
//! in production from what `jadpo build --out DIR` wrote (`plan.json` and
//! `app.bundle`), never from a working tree. It refuses to start, naming
//! the cause, unless the bundle matches its checksums and rebuilds to the
//! plan (and to `--expect-build`), every config binding is set, and every
//! store's `JADPO_STORE_<NAME>` opens with a compatible schema.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jadpo_compiler::resolve::Lowering;
use jadpo_plan::Plan;
use jadpo_runtime::suite::prepare_fixture;
use jadpo_server::build::Build;
use jadpo_server::engine::listing::{Human, JsonLines, Listen};
use jadpo_server::engine::Providers;
use jadpo_server::engine::{Engine, Settings};
use jadpo_server::fakes::SharedFake;
use jadpo_server::http::Auth;
use jadpo_server::http_provider::HttpProviders;
use jadpo_server::store::{Apply, OpenOptions};

use crate::bundle::Bundle;
use crate::cli::{LogFormat, MigrateMode, ServeArgs};
use crate::dev::{
    behind_fake_server, config_values, fake_server_line, fakes_fixture, run_server, Edge, Env,
    Roles,
};

pub fn run(args: &ServeArgs) -> u8 {
    match serve(args) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("error: jadpo serve cannot start: {why}");
            2
        }
    }
}

fn serve(args: &ServeArgs) -> Result<(), String> {
    let listing: Arc<dyn Listen> = match args.log {
        LogFormat::Human => Arc::new(Human(std::sync::Mutex::new(std::io::stdout()))),
        LogFormat::Json => Arc::new(JsonLines(std::sync::Mutex::new(std::io::stdout()))),
    };
    let dir = Path::new(&args.bundle_dir);
    let plan_text = crate::plan_diff::read_plan_file(&dir.join("plan.json").to_string_lossy())?;
    let plan: Plan = serde_json::from_str(&plan_text).map_err(|e| {
        format!(
            "{}/plan.json is not a plan of this jadpo ({e})",
            args.bundle_dir
        )
    })?;
    let bundle = Bundle::read(&dir.join("app.bundle"))?;
    if plan.bundle != bundle.checksum() {
        return Err(
            "the plan does not match the bundle beside it (its `bundle` checksum differs)".into(),
        );
    }
    if let Some(want) = &args.expect_build {
        if &plan.build_id != want {
            return Err(format!(
                "the bundle is build {}, not the expected {want}",
                plan.build_id
            ));
        }
    }
    let (program, rebuilt) = rebuild(&bundle)?;
    if rebuilt.build_id != plan.build_id {
        return Err(format!(
            "the bundle rebuilds to build {}, not the plan's {}: it was built by another jadpo",
            rebuilt.build_id, plan.build_id
        ));
    }
    let env = Env::read(None)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(jadpo_server::tls::acceptor(
            Path::new(cert),
            Path::new(key),
        )?),
        _ => None,
    };
    // Production config comes from the bindings, never from a fixture.
    let scripts = match &args.fakes {
        Some(name) => {
            let id = fakes_fixture(&program, Some(name))?;
            let prepared = prepare_fixture(&program, Some(id));
            if let Some(why) = &prepared.error {
                return Err(format!("the fixture's fakes cannot be made: {why}"));
            }
            Some(prepared.scripts.clone())
        }
        None => None,
    };
    let config = config_values(&program, None, &env, scripts.is_some())?;
    // The rebuilt plan is the file's, with the program's action ids.
    let plan = rebuilt;
    let (store, setup) = open_store(&program, &plan, args)?;
    let auth = Auth::from_env(|k| env.get(k))?;
    let build = Build::new(program, plan);
    // Fakes answer behind the fake provider server, as in `jadpo dev`: the
    // calls go over HTTP as they would to the providers.
    let (providers, fakes_at): (Arc<dyn Providers>, _) = match scripts {
        Some(scripts) => {
            let fake = match &args.fakes_journal {
                Some(path) => SharedFake::journaled(scripts, build.program, Path::new(path))?,
                None => SharedFake::new(scripts),
            };
            let (providers, url) = behind_fake_server(Arc::new(fake), build.program, &config)?;
            (Arc::new(providers), Some(url))
        }
        None => (Arc::new(HttpProviders::new(config.clone())), None),
    };
    if build.routes.iter().any(|r| r.auth_required) && !auth.configured() {
        return Err(
            "the app has routes with `auth: required`, and neither JADPO_API_KEYS nor JADPO_JWT_KEY is set"
                .into(),
        );
    }
    let settings = Settings {
        runner: format!(
            "{}-{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "jadpo".into()),
            std::process::id()
        ),
        lease_ms: (args.lease * 1000.0) as u64,
        concurrency: args.concurrency.max(1),
        retry_cap_ms: None,
        queues: args.queues.clone(),
        alert_after_ms: args.upkeep.alert_after,
        keep: args.upkeep.retention(),
    };
    let engine = Engine::new(build, store, providers, config, settings, listing.clone());
    let roles = roles(&args.roles)?;
    let grace = Duration::from_secs_f64(args.shutdown_grace);
    let id = build.plan.build_id.get(..12).unwrap_or("").to_string();
    let metrics = Some(args.metrics_listen.as_str()).filter(|m| !m.is_empty());
    let scheme = if tls.is_some() { "https" } else { "http" };
    let edge = Edge {
        listen: &args.listen,
        metrics,
        tls,
    };
    run_server(&engine, auth, roles, edge, grace, Vec::new(), |address| {
        listing.note(&format!(
            "jadpo serve: build {id} of `{}` on {scheme}://{address} (runner {})",
            build.program.app.name, engine.settings.runner
        ));
        for line in &setup {
            listing.note(line);
        }
        if let Some(url) = &fakes_at {
            listing.note(&fake_server_line(url));
        }
    })
}

/// The bundle's app checked with its code, and its plan with the bundle's
/// checksum, as `jadpo build` made it.
fn rebuild(bundle: &Bundle) -> Result<(jadpo_compiler::ir::Program, Plan), String> {
    let loader = bundle.loader();
    let outcome = crate::check::check_app_lowering(
        &loader,
        "app",
        jadpo_checker::Wanted::Whole,
        Lowering::Code,
    );
    if outcome.has_errors() || outcome.program.is_none() {
        let text = crate::render::human::render_all_from(
            &outcome.files,
            &outcome.diagnostics,
            false,
            "app",
        );
        return Err(format!("the bundle's app does not check clean:\n{text}"));
    }
    let mut plan = match outcome.plan.as_ref().and_then(|p| p.app()) {
        Some(p) => p.clone(),
        None => return Err("the bundle's app has no plan".into()),
    };
    plan.bundle = bundle.checksum();
    plan.build_id = jadpo_checker::plan::build_id(&plan);
    let program = outcome
        .program
        .ok_or_else(|| "the bundle's app cannot be checked".to_string())?;
    Ok((program, plan))
}

fn open_store(
    program: &jadpo_compiler::ir::Program,
    plan: &Plan,
    args: &ServeArgs,
) -> Result<(Arc<dyn jadpo_runtime::store::Store>, Vec<String>), String> {
    let stores = crate::dev::app_stores(program, Some(plan))?;
    let options = OpenOptions {
        apply: match args.migrate {
            MigrateMode::Auto => Apply::Auto,
            MigrateMode::Check => Apply::Check,
        },
        ..OpenOptions::default()
    };
    // Every binding is read before any store is opened: a missing one is
    // refused before anything is written.
    let mut urls = BTreeMap::new();
    for name in &stores.names {
        let var = format!("JADPO_STORE_{}", name.to_ascii_uppercase());
        let url = std::env::var(&var).map_err(|_| {
            format!("{var} is not set: it names store `{name}` (sqlite:PATH or postgres://...)")
        })?;
        urls.insert(name.clone(), url);
    }
    let bindings = stores
        .names
        .iter()
        .map(|name| {
            let schema = crate::dev::store_schema(program, Some(plan), name);
            (urls.get(name).cloned().unwrap_or_default(), schema)
        })
        .collect();
    let opened = jadpo_server::store::open_each(bindings, options).map_err(|e| {
        let hint = match e.kind {
            jadpo_runtime::store::ErrorKind::Incompatible => {
                "\n  `jadpo db status --app APP_DIR`, with the same JADPO_STORE_<NAME>, lists every change this build needs and why a start refuses it"
            }
            _ => "",
        };
        format!("{e}{hint}")
    })?;
    let lines = opened.setup_lines();
    Ok((stores.join(opened.stores), lines))
}

fn roles(list: &[String]) -> Result<Roles, String> {
    if list.is_empty() {
        return Ok(Roles::all());
    }
    let mut r = Roles {
        routes: false,
        deliveries: false,
        schedules: false,
        maintenance: false,
    };
    for role in list {
        match role.as_str() {
            "routes" => r.routes = true,
            "deliveries" => r.deliveries = true,
            "schedules" => r.schedules = true,
            "maintenance" => r.maintenance = true,
            other => {
                return Err(format!(
                "`{other}` is not a role: the roles are routes, deliveries, schedules, maintenance"
            ))
            }
        }
    }
    Ok(r)
}
