//! # follow_up.self_collision: a subscriber stages its own trigger again
//!
//! ## What it checks
//!
//! A subscriber of event `E` runs an action that stages `E` (itself or
//! through the actions it calls) with `unique` options that are the same as
//! those of an emit site of `E`, and whose `states` include `running` or
//! `completed` (the default states do): the states the trigger is in while
//! its subscriber commits. The emit being judged is one of those sites:
//! when the subscriber's own follow-up triggers it again, the trigger and
//! the new follow-up share their unique options. So any such `emit E`
//! reached from a subscriber of `E` is reported, and the finding labels the
//! other emit sites of `E` whose literal unique options are the same. One
//! finding per action and event, at the first such emit, naming every such
//! subscriber. Unique options computed at run time are not judged.
//!
//! ## Why it matters
//!
//! A unique follow-up is skipped when one with the same key already exists
//! in one of its `states`. The trigger holds its key while it runs and, by
//! default, once it has completed, so a follow-up of its own kind and
//! arguments with its own unique options collides with it: it is skipped,
//! the commit still lands, and the chain silently stops.
//!
//! ## Failing example
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Cursor = Text { max_length: 64 }
//!
//! event SyncPage {
//!     cursor: Cursor
//! }
//!
//! action sync_page(event: SyncPage) -> Unit {
//!     emit SyncPage { cursor: event.cursor } with {
//!         unique: { by_args: true }
//!     }
//! }
//!
//! subscriber sync on SyncPage {
//!     run: sync_page(event)
//! }
//! ```
//!
//! ## Fixed example
//!
//! The continuation is deduplicated only against follow-ups still waiting,
//! so the running trigger does not block it.
//!
//! ```jadpo
//! application Example {
//!     events: { store: primary }
//! }
//!
//! store primary { kind: postgres }
//!
//! type Cursor = Text { max_length: 64 }
//!
//! event SyncPage {
//!     cursor: Cursor
//! }
//!
//! action sync_page(event: SyncPage) -> Unit {
//!     emit SyncPage { cursor: event.cursor } with {
//!         unique: { by_args: true states: ["scheduled", "available"] }
//!     }
//! }
//!
//! subscriber sync on SyncPage {
//!     run: sync_page(event)
//! }
//! ```
//!
//! ## How to decline
//!
//! When the continuation's arguments always differ from its trigger's,
//! write `decline follow_up.self_collision "each page has a new cursor"` on
//! the line before the action.
//!
//! ## Related
//!
//! `follow_up.lock_order`.

use std::collections::BTreeMap;

use jadpo_compiler::diag::Diagnostic;
use jadpo_compiler::ir::{ActionId, Emit, Entry, EntryKind, EventId};
use jadpo_compiler::span::Span;

use super::event;
use crate::analysis::follow_up::options::{self, UniqueKey};
use crate::analysis::follow_up::{emits_in, Reach};
use crate::rules::{rule_info, text, Cx, Finding};

rule_info!(
    "follow_up",
    "self_collision",
    Warning,
    "a subscriber stages its own trigger again"
);

/// Other emit sites labelled at most.
const SHOWN: usize = 3;

pub fn check(cx: &Cx, out: &mut Vec<Finding>) {
    // Only the subscribers that stage their trigger are grouped: a large
    // app has thousands of subscribers and few, if any, findings.
    let mut groups: BTreeMap<(ActionId, EventId), (&Reach, Vec<&Entry>)> = BTreeMap::new();
    for entry in &cx.program.entries {
        let (EntryKind::Subscriber { event: Some(ev) }, Some(a)) = (&entry.kind, entry.action)
        else {
            continue;
        };
        if !cx.in_scope(a) {
            continue;
        }
        if let Some(reach) = stages_trigger(cx, a, *ev) {
            groups
                .entry((a, *ev))
                .or_insert((reach, Vec::new()))
                .1
                .push(entry);
        }
    }
    // Built on the first finding, once: scanning every body per finding
    // made the check cost findings times the program.
    let sites: std::cell::OnceCell<EmitSites> = std::cell::OnceCell::new();
    for ((a, ev), (reach, entries)) in groups {
        let sites = sites.get_or_init(|| emit_sites(cx));
        out.push(Finding::of(
            a,
            diagnostic(cx, (a, ev), reach, &entries, sites),
        ));
    }
}

/// Where action `a` first stages `ev`, its own trigger, with unique
/// options that block on the trigger.
fn stages_trigger<'c>(cx: &Cx<'c>, a: ActionId, ev: EventId) -> Option<&'c Reach> {
    let fu = cx.analysed.follow_ups.get(a)?;
    fu.unique_reach
        .iter()
        .filter(|((e, key), _)| *e == ev && key.blocks_on_trigger())
        .map(|(_, r)| r)
        .min_by_key(|r| (r.place.start, r.emit.start))
}

/// Every emit of the program, by event, in action and body order.
type EmitSites<'p> = BTreeMap<EventId, Vec<&'p Emit>>;

fn emit_sites<'p>(cx: &Cx<'p>) -> EmitSites<'p> {
    let mut sites: EmitSites<'p> = BTreeMap::new();
    for action in &cx.program.actions {
        for emit in emits_in(&action.body) {
            sites.entry(emit.event).or_default().push(emit);
        }
    }
    sites
}

fn diagnostic(
    cx: &Cx,
    (a, ev): (ActionId, EventId),
    reach: &Reach,
    entries: &[&Entry],
    sites: &EmitSites,
) -> Diagnostic {
    let name = event(cx.program, ev);
    let mut d = INFO.report(reach.place,
        format!(
            "`{}` stages `{name}`, the event that triggers it, with the same unique options as its trigger",
            text::action(cx.program, a)
        ),
    )
    .with_label("collides with the follow-up that triggered this run");
    if let Some(callee) = reach.via {
        if cx.reportable(reach.emit) {
            d = d.with_related(
                reach.emit,
                format!("staged here, in `{}`", text::action(cx.program, callee)),
            );
        }
    }
    for entry in entries {
        d = d.with_related(
            entry.span,
            format!("`{}` runs it for each `{name}`", entry.label),
        );
    }
    let elsewhere = sites.get(&ev).map_or(&[][..], Vec::as_slice);
    for span in same_options_elsewhere(cx, elsewhere, &reach.unique, reach.emit) {
        d = d.with_related(
            span,
            format!("`{name}` is also staged here with the same unique options"),
        );
    }
    d.with_reason(
        "a unique follow-up is skipped while one with the same key exists in its `states`; the \
         trigger holds that key while it runs and, by default, once completed, so the chain stops",
    )
    .with_fix("give the continuation different arguments, or `unique` `states` that leave out `running` and `completed`")
    .with_fix("stage a different event for the continuation")
    .with_help("if the arguments always differ from the trigger's, decline the warning before the action with a reason")
}

/// Other emit sites of `ev` anywhere in the program whose literal unique
/// options are the same.
fn same_options_elsewhere(cx: &Cx, sites: &[&Emit], unique: &UniqueKey, except: Span) -> Vec<Span> {
    let mut spans = Vec::new();
    for emit in sites {
        if emit.head == except || !cx.reportable(emit.head) {
            continue;
        }
        if options::unique(emit).is_some_and(|u| u.known_same(unique)) {
            spans.push(emit.head);
        }
    }
    spans.truncate(SHOWN);
    spans
}
