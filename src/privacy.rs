//! `jadpo privacy [PATH]`: the personal-data report of an app (the seed's
//! "Personal data", design `server.md` section 24): what the app and its
//! runtime keep, in which form, and for how long.

use jadpo_compiler::ir::Program;

/// The report, as Markdown-like text.
pub fn report(program: &Program) -> String {
    let mut out = format!("# What `{}` keeps\n\n", program.app.name);
    out.push_str("## The app's own rows\n\n");
    let app_entities: Vec<_> = program
        .entities
        .iter()
        .filter(|e| e.owner == jadpo_compiler::ir::Owner::App)
        .collect();
    if app_entities.is_empty() {
        out.push_str("- none: the app declares no entity\n");
    }
    let types = program.type_table();
    for e in app_entities {
        let fields: Vec<String> = match types.def(e.ty).map(|d| &d.kind) {
            Some(jadpo_compiler::ir::TypeKind::Record(fields)) => {
                fields.iter().map(|f| f.name.as_str().to_string()).collect()
            }
            _ => Vec::new(),
        };
        out.push_str(&format!(
            "- `{}` ({}), in store `{}`: until the app deletes them\n",
            e.qualified,
            fields.join(", "),
            e.store.map_or("?".to_string(), |s| s.as_str().to_string())
        ));
    }
    out.push_str(
        "\n## What the runtime keeps\n\n\
         - Provider answers for unfinished actions, at most 30 days: encrypted with the steps key \
         (`application { steps: { encryption_key: } }`), then dropped; the list of steps (operations, \
         states, times, keys) stays until `jadpo deliveries forget`.\n\
         - Requests sent to providers: only as fingerprints (BLAKE3), never as sent.\n\
         - Event payloads: until 24 hours after their deliveries end.\n\
         - Route answers stored for Idempotency-Key replays: 24 hours, encrypted with the steps key.\n\
         - Completed deliveries (ids, actions, states, times): 24 hours.\n\
         - Logs and metrics: ids, route templates, operations, statuses, durations and outcomes; \
         never bodies, answers, payloads or client addresses; a client's key only as a 6-character \
         BLAKE3 prefix.\n\n\
         Nothing the runtime keeps links an answer to a person: the personal-data report lists \
         \"provider answers for unfinished actions, at most 30 days\", as it does for logs.\n",
    );
    out
}
