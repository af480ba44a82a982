//! Command-line arguments (clap derive). The help text is the first thing a
//! newcomer reads, so it says what each command does and what exit status
//! means.

use clap::{Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Exit status:
  0  no errors (warnings allowed unless --deny-warnings)
  1  the project has errors (for `jadpo test`: or a test failed)
  2  the project could not be checked at all (bad arguments, missing or unreadable jadpo.yaml)

Examples:
  jadpo check examples/billing
  jadpo check --format json . > findings.json
  jadpo build examples/billing --out build
  jadpo test examples/billing --filter declined
  jadpo explain step.unkeyed
  jadpo publish packages/mailer --registry ../registry
  jadpo plan diff deployed/plan.json build/plan.json";

/// Checks and builds Jadpo apps: actions that call outside providers, checked
/// ahead of time so that several changing calls in one action are safe to
/// resume.
#[derive(Debug, Parser)]
#[command(name = "jadpo", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check an app (or a package) and report its errors and warnings.
    Check(CheckArgs),
    /// Check an app, then write its plan (`plan.json`) for the runtime.
    /// Refuses to write anything when the app has errors.
    Build(BuildArgs),
    /// Explain a diagnostic code, e.g. `jadpo explain step.unkeyed`.
    Explain(ExplainArgs),
    /// Run the language server on stdin/stdout (for editors): the same
    /// findings as `jadpo check`, on unsaved text, with hover, go to
    /// definition, references, symbols and quick fixes.
    Lsp,
    /// Check a package on its own and store it, with its surface and a
    /// checksum, in a registry folder. Refuses a package with any error.
    /// Exit status 0 published, 1 refused (errors, or the version is already
    /// published), 2 the package cannot be checked or the registry written.
    Publish(PublishArgs),
    /// Check an app, then run its tests: each once clean and once per crash
    /// point of its multi-step deliveries. Exit status 0 every test passed,
    /// 1 a test failed or the app has errors, 2 the app cannot be checked.
    Test(TestArgs),
    /// Work with plans written by `jadpo build`.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Run an app on this machine: its routes on 127.0.0.1:8080, its
    /// subscribers and schedules, its store in `.jadpo/dev.sqlite`, its
    /// providers answered by a fixture's fakes (`dev` by default). Prints
    /// each attempt's steps; rebuilds when the app's files change.
    Dev(DevArgs),
    /// Run a build in production from `jadpo build --out DIR`'s
    /// `plan.json` and `app.bundle`: routes, deliveries and schedules on
    /// the stores named by `JADPO_STORE_<NAME>` (SQLite for one process,
    /// Postgres for several). Refuses to start, naming the cause, when a
    /// binding is missing, a schema is incompatible or the plan does not
    /// match the bundle.
    Serve(ServeArgs),
    /// Read and settle an app's deliveries in its store, while servers
    /// run or not: list, show, retry, abandon.
    #[command(subcommand_value_name = "COMMAND")]
    Deliveries(DeliveriesArgs),
    /// Records not yet committed, checked against a build before deploying
    /// it.
    Runs(RunsArgs),
    /// An app's stores against its build: what a start would change or
    /// refuse, and the columns, tables and schedules earlier builds left
    /// (`status`), which only `prune --yes` drops.
    #[command(subcommand)]
    Db(DbCommand),
    /// Alerting rules matching the server's metrics: `jadpo alerts
    /// prometheus > jadpo.rules.yml`.
    #[command(subcommand)]
    Alerts(AlertsCommand),
    /// The personal-data report: what the app and its runtime keep, in
    /// which form, and for how long.
    Privacy(PrivacyArgs),
    /// Create a new app in PATH (a new or empty folder, named after it) with
    /// an application, one route, one subscriber and one test, that checks
    /// clean: `jadpo new notes && jadpo test notes`.
    New(NewArgs),
    /// Rewrite `.jadpo` files in their canonical layout (spec/formatting.md),
    /// keeping every comment. A file with a syntax error is left as it is.
    /// Exit status 0 formatted, 1 `--check` found files to change or a file
    /// could not be formatted, 2 PATH cannot be read.
    Fmt(FmtArgs),
    /// Check the app, then again on every change of its sources, manifests
    /// and local packages, until interrupted; the screen is cleared between
    /// runs on a terminal. `--format json`: one JSON line per run.
    Watch(WatchArgs),
    /// Show what a package offers: its provider's idempotency facts, its
    /// operations (request, answer, whether each changes and how it is
    /// sent, failures), types, failures and public actions with their
    /// surfaces. PKG is a package folder, a package the app requires, or a
    /// bundled package (`jadpo doc stripe`).
    Doc(DocArgs),
    /// Print a shell completion script, e.g.
    /// `jadpo completions bash > ~/.local/share/bash-completion/completions/jadpo`.
    Completions(CompletionsArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The app to watch: a folder or a file in it (the nearest folder at
    /// or above it holding `jadpo.yaml`).
    #[arg(default_value = ".")]
    pub path: String,
    /// `human`: the check's output, the screen cleared between runs on a
    /// terminal; `json`: one JSON line per run (the document of `check
    /// --format json`, with `run` and `took_ms`).
    #[arg(long, value_enum, default_value_t = WatchFormat::Human)]
    pub format: WatchFormat,
    #[command(flatten)]
    pub color: ColorArg,
}

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// `.jadpo` files, or folders searched for them (hidden folders,
    /// `target`, `build`, links, other apps and other repositories
    /// skipped). Without a path: the app (or package) the current folder
    /// is in, as `jadpo check` finds it.
    pub paths: Vec<String>,
    /// Change nothing: list the files that would change, exit 1 if any.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The folder to create; its name is the app's name.
    pub path: String,
}

#[derive(Debug, clap::Args)]
pub struct DocArgs {
    /// A package: a folder holding `package.yaml`, the name of a package
    /// the app requires, or the name of a bundled package.
    pub package: String,
    /// The app whose requirements name packages (a folder or a file in it).
    #[arg(long, default_value = ".")]
    pub app: String,
    /// `text` for a terminal, `markdown` for a page.
    #[arg(long, value_enum, default_value_t = DocFormat::Text)]
    pub format: DocFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DocFormat {
    Text,
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Compare two plans action by action: unchanged, appended, changed,
    /// added or removed. Exit status 0 when no in-flight record would be
    /// stranded, 1 when one would, 2 when a plan cannot be read.
    Diff(PlanDiffArgs),
}

#[derive(Debug, clap::Args)]
pub struct PlanDiffArgs {
    /// The plan now deployed (its records may be in flight).
    pub old: String,
    /// The plan about to be deployed.
    pub new: String,
    /// `human`: one line per action; `json`: one JSON document
    /// (spec/plan-diff.md).
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// The package folder: the one holding `package.yaml`.
    #[arg(default_value = ".")]
    pub path: String,
    /// The registry folder to publish into (`NAME/VERSION/` is created in it);
    /// also where the package's own requirements are resolved. A dry run
    /// needs none.
    #[arg(long, value_name = "DIR", required_unless_present = "dry_run")]
    pub registry: Option<String>,
    /// Check and compute everything, but write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// `human`, or `json`: one document on stdout, `jadpo check --format
    /// json`'s with a `publish` member saying what was (or would be)
    /// stored (docs/json-output.md).
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    #[command(flatten)]
    pub color: ColorArg,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The app or package to check: a folder or a file in it. The nearest
    /// folder at or above it holding `jadpo.yaml` (an app) or `package.yaml`
    /// (a package, checked alone as `jadpo publish` checks it) is checked.
    #[arg(default_value = ".")]
    pub path: String,
    /// `human`: source frames for people; `json`: one JSON document on stdout
    /// for CI and editors (spec/json-output.schema.json); `sarif`: SARIF 2.1.0
    /// for code scanning; `github`: GitHub Actions annotations, one line per
    /// diagnostic.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Exit with status 1 when there are warnings, too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Apply every fix marked safe (`jadpo explain CODE` says which), then
    /// check again and report what remains. Files with a syntax error are
    /// never touched.
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print the safe fixes as a unified diff; change nothing.
    #[arg(long)]
    pub diff: bool,
    /// With `--format sarif`: where the pages of `spec/diagnostics/` are
    /// served (`https://docs.example.com/jadpo/diagnostics/`); each rule
    /// links to URL + its code (`helpUri`). Without it, rules carry their
    /// documentation as text only.
    #[arg(long, value_name = "URL", value_parser = absolute_url)]
    pub docs_url: Option<String>,
    #[command(flatten)]
    pub color: ColorArg,
}

/// An `http(s)://` address, as SARIF's `helpUri` must be absolute.
fn absolute_url(text: &str) -> Result<String, String> {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or("an absolute http:// or https:// address is needed")?;
    if rest.is_empty() || rest.starts_with('/') || text.chars().any(char::is_whitespace) {
        return Err("the address has no host, or holds a space".into());
    }
    Ok(text.to_string())
}

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The app (or package) whose tests run: a folder or a file in it; the
    /// nearest folder at or above it holding `jadpo.yaml` or `package.yaml`.
    #[arg(default_value = ".")]
    pub path: String,
    /// Run only the tests whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Skip the crash matrix: run each test once, clean.
    #[arg(long)]
    pub no_crash: bool,
    /// How long one test may run, its crash runs included, in seconds; a
    /// test past it fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = positive_seconds)]
    pub time_limit: f64,
    /// `human`: a line per test; `json`: one JSON document
    /// (spec/test-output.schema.json).
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    #[command(flatten)]
    pub color: ColorArg,
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The app to build: a folder or a file in it; the nearest folder at or
    /// above it holding `jadpo.yaml`.
    #[arg(default_value = ".")]
    pub path: String,
    /// Where to write `plan.json` [default: PATH/build].
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    /// `human`, or `json`: one document on stdout, `jadpo check --format
    /// json`'s with a `build` member saying what was written
    /// (docs/json-output.md).
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    #[command(flatten)]
    pub color: ColorArg,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// A diagnostic code as printed in brackets, e.g. `step.unkeyed`.
    #[arg(required_unless_present = "list")]
    pub code: Option<String>,
    /// List every code the tool can report, with its summary, by family.
    #[arg(long, conflicts_with = "code")]
    pub list: bool,
}

#[derive(Debug, clap::Args)]
pub struct ColorArg {
    /// When to colour human output. `auto` colours only on a terminal and
    /// never when the `NO_COLOR` environment variable is set.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output written to stdout.
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                !no_color && std::io::stdout().is_terminal()
            }
        }
    }
}

/// A time limit: seconds above zero, at most a day.
/// `primary=postgres://...`: a store's name and its URL.
fn store_binding(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, url)) if !name.is_empty() && !url.is_empty() => {
            Ok((name.to_string(), url.to_string()))
        }
        _ => Err(format!(
            "`{text}` is not NAME=URL, such as primary=postgresql:///app?host=/run/postgresql"
        )),
    }
}

/// `500ms`, `90s`, `30m`, `24h`, `2d` in milliseconds, above 0 and at
/// most 10 years.
pub fn duration_ms(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a duration such as 90s, 30m, 24h or 2d");
    let at = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = text.split_at(at);
    let n: u64 = n.parse().map_err(|_| bad())?;
    let size: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(size) {
        Some(ms) if ms > 0 && ms <= 10 * 366 * 86_400_000 => Ok(ms),
        _ => Err(format!(
            "`{text}` is not a duration above 0 and at most 10 years"
        )),
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds above 0 and at most 86400"
        )),
    }
}

/// What `jadpo dev` and `jadpo serve` share about unfinished work and
/// retention (design sections 20 and 21).
#[derive(Debug, clap::Args)]
pub struct UpkeepArgs {
    /// Fire the unfinished-work alert when the oldest unfinished record
    /// is older than this (`90s`, `30m`, `1h`, `2d`).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = duration_ms)]
    pub alert_after: u64,
    /// How long completed deliveries, their events and answered route
    /// claims are kept (`24h`); also the dedupe window of `completed`.
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = duration_ms)]
    pub keep_completed: u64,
}

impl UpkeepArgs {
    /// What the maintenance role keeps.
    pub fn retention(&self) -> jadpo_runtime::store::Retention {
        jadpo_runtime::store::Retention {
            completed_ms: self.keep_completed,
            ..Default::default()
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct DevArgs {
    /// The app: a folder or a file in it (the nearest folder at or above
    /// it holding `jadpo.yaml`).
    #[arg(default_value = ".")]
    pub path: String,
    /// The address the routes answer on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// The SQLite file of the app's stores, each under its own prefix
    /// (default `.jadpo/dev.sqlite` in the app's folder).
    #[arg(long, value_name = "FILE")]
    pub db: Option<String>,
    /// The fixture whose fakes answer the providers (default: `dev`).
    #[arg(long, value_name = "FIXTURE")]
    pub fakes: Option<String>,
    /// Moves a store to Postgres: `primary=postgres://...` (repeatable).
    #[arg(long = "store", value_name = "NAME=URL", value_parser = store_binding)]
    pub stores: Vec<(String, String)>,
    /// Config values from a file of NAME=value lines (config bindings).
    #[arg(long, value_name = "FILE")]
    pub env_file: Option<String>,
    /// Start with empty stores (removes the SQLite file first).
    #[arg(long)]
    pub reset: bool,
    /// Do not rebuild when the app's files change.
    #[arg(long)]
    pub no_reload: bool,
    /// How long a runner's lease on a delivery lasts, in seconds: a
    /// delivery whose runner died is taken over once it lapses.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub lease: f64,
    /// `human`: the attempts as lines; `json`: one JSON line per attempt.
    #[arg(long, value_enum, default_value_t = WatchFormat::Human)]
    pub format: WatchFormat,
    #[command(flatten)]
    pub upkeep: UpkeepArgs,
}

impl DevArgs {
    /// Where the fakes keep their keys and effects: beside the store's
    /// file (`dev.sqlite.fakes.jsonl`).
    pub fn journal_path(&self, dir: &str) -> std::path::PathBuf {
        let mut p = self.db_path(dir).into_os_string();
        p.push(".fakes.jsonl");
        std::path::PathBuf::from(p)
    }

    /// The store's file: `--db`, else `.jadpo/dev.sqlite` in the app.
    pub fn db_path(&self, dir: &str) -> std::path::PathBuf {
        match &self.db {
            Some(db) => std::path::PathBuf::from(db),
            None => std::path::Path::new(dir).join(".jadpo").join("dev.sqlite"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MigrateMode {
    /// Apply additive schema changes at start.
    Auto,
    /// Refuse to start when the schema needs any change.
    Check,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The folder `jadpo build --out` wrote: `plan.json` and `app.bundle`.
    pub bundle_dir: String,
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub listen: String,
    /// Where `/metrics` answers (empty: nowhere).
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub metrics_listen: String,
    /// What this process does: any of routes, deliveries, schedules,
    /// maintenance (default all).
    #[arg(long, value_delimiter = ',')]
    pub roles: Vec<String>,
    /// The queues whose deliveries this process runs (default all).
    #[arg(long, value_delimiter = ',')]
    pub queues: Vec<String>,
    /// Attempts run at once.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// A runner's lease on a delivery, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub lease: f64,
    /// How long attempts in flight may finish after SIGTERM, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub shutdown_grace: f64,
    #[command(flatten)]
    pub upkeep: UpkeepArgs,
    #[arg(long, value_enum, default_value_t = MigrateMode::Auto)]
    pub migrate: MigrateMode,
    /// Refuse to start unless the bundle is this build.
    #[arg(long, value_name = "ID")]
    pub expect_build: Option<String>,
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log: LogFormat,
    /// Answer providers from a fixture's fakes instead of calling them over
    /// HTTP.
    #[arg(long, value_name = "FIXTURE")]
    pub fakes: Option<String>,
    /// Answer HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<String>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<String>,
    /// A file the fakes keep their keys and effects in, shared by every
    /// process naming it (as one provider's state).
    #[arg(long, value_name = "FILE")]
    pub fakes_journal: Option<String>,
}

/// Where the operator commands find the store.
#[derive(Debug, clap::Args)]
pub struct OperatorStore {
    /// The app whose store it is (its name and store, its plan).
    #[arg(long, default_value = ".")]
    pub app: String,
    /// The store's URL (`sqlite:PATH`, `postgres://...`), for an app of
    /// one store; default `JADPO_STORE_<NAME>` for each store, else the
    /// app's `jadpo dev` file, `.jadpo/dev.sqlite`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The variable holding the steps key answers are sealed with.
    #[arg(long, value_name = "NAME", default_value = "STEPS_KEY")]
    pub steps_key_env: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    Human,
    Json,
}

impl OutFormat {
    pub fn json(self) -> bool {
        self == OutFormat::Json
    }
}

#[derive(Debug, clap::Args)]
pub struct DeliveriesArgs {
    #[command(subcommand)]
    pub command: DeliveriesCommand,
}

#[derive(Debug, Subcommand)]
pub enum DeliveriesCommand {
    /// One line per delivery: id, action, entry, state, steps, age.
    List {
        /// Only those not done (any state but completed and abandoned).
        #[arg(long)]
        not_done: bool,
        #[arg(long, value_name = "STATE")]
        state: Option<String>,
        #[arg(long, value_name = "ACTION")]
        action: Option<String>,
        /// Only those created within this long (`24h`, `30m`, `7d`).
        #[arg(long, value_name = "DURATION")]
        since: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[arg(long, value_enum, default_value_t = OutFormat::Human)]
        format: OutFormat,
        #[command(flatten)]
        at: OperatorStore,
    },
    /// A delivery with each step: its state, time and answer's id, what to
    /// check and the commands that settle it.
    Show {
        /// The id, or a unique prefix of it.
        id: String,
        #[arg(long, value_enum, default_value_t = OutFormat::Human)]
        format: OutFormat,
        #[command(flatten)]
        at: OperatorStore,
    },
    /// Put an ended delivery back to run; its record replays.
    Retry {
        id: String,
        /// Its step in doubt was checked and did not act: send it again
        /// under a new key.
        #[arg(long)]
        not_done: bool,
        #[command(flatten)]
        at: OperatorStore,
    },
    /// Remove an ended delivery with its record and item, for good.
    Forget {
        id: String,
        #[command(flatten)]
        at: OperatorStore,
    },
    /// End a delivery for good, keeping its steps.
    Abandon {
        id: String,
        #[arg(long, default_value = "abandoned by an operator")]
        reason: String,
        #[command(flatten)]
        at: OperatorStore,
    },
}

#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Every unfinished record, and whether the plan `--build` resumes it
    /// or holds it as diverged: exit 1 when any would be held (the
    /// pre-deploy gate).
    Unfinished(UnfinishedArgs),
}

#[derive(Debug, clap::Args)]
pub struct UnfinishedArgs {
    /// The plan of the build to deploy (`jadpo build`'s `plan.json`).
    #[arg(long, value_name = "PLAN")]
    pub build: String,
    #[command(flatten)]
    pub at: OperatorStore,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Each store against the app: its runtime tables' version, the
    /// changes a server of this build would make at start or refuse, and
    /// what earlier builds left (removed fields' columns, removed
    /// entities' tables, removed schedules). Exit 1 when a start would be
    /// refused.
    Status {
        #[arg(long, value_enum, default_value_t = OutFormat::Human)]
        format: OutFormat,
        #[command(flatten)]
        at: OperatorStore,
    },
    /// Drop what earlier builds left: removed fields' columns, removed
    /// entities' tables and removed schedules' last ticks. Without
    /// `--yes`, lists them and drops nothing. Run it once no server of an
    /// earlier build runs: its writes still name them.
    Prune {
        /// Drop them.
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        at: OperatorStore,
    },
}

#[derive(Debug, Subcommand)]
pub enum AlertsCommand {
    /// Prometheus alerting rules for the no-setup alert.
    Prometheus,
}

#[derive(Debug, clap::Args)]
pub struct PrivacyArgs {
    /// The app: a folder or a file in it.
    #[arg(default_value = ".")]
    pub path: String,
}
