//! A small YAML tree with byte spans, read with serde-saphyr under a strict
//! budget, so every manifest diagnostic can point into the YAML text and
//! alias bombs, deep nesting and huge documents are refused quickly.

use crate::diag::Diagnostic;
use crate::span::{FileId, Span};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::options::DuplicateKeyPolicy;

/// Manifests larger than this are refused before parsing.
pub const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// A manifest's bytes for a quick look (its name, its version), or `None`
/// when it cannot be read or is over [`MAX_MANIFEST_BYTES`]: refused by its
/// size before it is read, so a huge `package.yaml` costs nothing here (the
/// real load reports it).
pub fn read_bounded(loader: &dyn super::Loader, path: &str) -> Option<Vec<u8>> {
    if loader
        .size(path)
        .is_some_and(|len| len > MAX_MANIFEST_BYTES as u64)
    {
        return None;
    }
    let bytes = loader.read(path).ok()?;
    (bytes.len() <= MAX_MANIFEST_BYTES).then_some(bytes)
}

/// One YAML node. Offsets are byte offsets into the manifest text.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in file order; duplicate keys are kept so the reader can
    /// report them with both spans.
    Map(Vec<(Node, Node)>),
}

impl Node {
    pub fn span(&self, file: FileId) -> Span {
        Span::new(file, self.start, self.end)
    }

    /// The author's word for the kind of value, for "expected X, found Y".
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "nothing",
            Value::Bool(_) => "true/false",
            Value::Int(_) => "a number",
            Value::Float(_) => "a decimal number",
            Value::Str(_) => "text",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Scalar text as written in YAML (numbers and booleans included), so
    /// `version: 3.1` or `window: 24` can still be read as text.
    pub fn scalar_text<'a>(&'a self, source: &'a str) -> Option<&'a str> {
        match &self.value {
            Value::Str(s) => Some(s),
            Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                source.get(self.start as usize..self.end as usize)
            }
            _ => None,
        }
    }
}

/// How many parsed manifests a [`Cache`] keeps.
const KEPT_PARSES: usize = 32;

/// Manifests parsed lately, by text, newest last. The editor loads the app
/// again on every edit; its manifests and the bundled packages' rarely
/// change, and reading them with serde-saphyr took most of the load. A
/// loader run owns one (the workspace keeps it between runs); failures are
/// not kept, as their diagnostic names the file.
#[derive(Default)]
pub struct Cache {
    kept: Vec<(String, std::sync::Arc<Node>)>,
}

impl Cache {
    /// [`parse`], reusing the tree of an identical text parsed lately. A
    /// tree holds only offsets, so it fits any file with that text.
    pub fn parse(
        &mut self,
        text: &str,
        file: FileId,
    ) -> Result<std::sync::Arc<Node>, Box<Diagnostic>> {
        if let Some(at) = self.kept.iter().position(|(t, _)| t == text) {
            // Most recently used last, so the oldest is dropped first.
            let entry = self.kept.remove(at);
            let node = entry.1.clone();
            self.kept.push(entry);
            return Ok(node);
        }
        let node = std::sync::Arc::new(parse(text, file)?);
        if self.kept.len() >= KEPT_PARSES {
            self.kept.remove(0);
        }
        self.kept.push((text.to_string(), node.clone()));
        Ok(node)
    }
}

/// Reads `text` as one YAML document, or returns the diagnostic saying why not.
pub fn parse(text: &str, file: FileId) -> Result<Node, Box<Diagnostic>> {
    if text.len() > MAX_MANIFEST_BYTES {
        return Err(too_large(text.len() as u64, file));
    }
    match serde_saphyr::from_str_with_options::<Node>(text, options()) {
        Ok(node) => Ok(node),
        Err(err) => Err(Box::new(error_to_diagnostic(&err, text, file))),
    }
}

/// `manifest.too_large`, for a manifest of `len` bytes.
pub fn too_large(len: u64, file: FileId) -> Box<Diagnostic> {
    let span = Span::new(file, 0, 0);
    Box::new(
        Diagnostic::error(
            "manifest.too_large",
            span,
            format!(
                "this manifest is {len} bytes; manifests are limited to {MAX_MANIFEST_BYTES} bytes"
            ),
        )
        .with_reason("a manifest this large is almost certainly not a hand-written manifest")
        .with_fix("keep only the manifest's settings in this file"),
    )
}

/// Limits far above any real manifest and far below anything that takes time.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 100_000,
            max_aliases: 100,
            max_anchors: 100,
            max_depth: 24,
            max_documents: 1,
            max_nodes: 50_000,
            max_total_scalar_bytes: MAX_MANIFEST_BYTES,
            max_merge_keys: 100,
            max_recorded_anchor_events: 10_000,
            max_recorded_anchor_bytes: MAX_MANIFEST_BYTES,
            flow_nesting_limit: 24,
        },
        alias_limits: alias_limits(),
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
        with_snippet: false,
        strict_booleans: true,
    }
}

fn alias_limits() -> serde_saphyr::options::AliasLimits {
    let mut limits = serde_saphyr::options::AliasLimits::default();
    limits.max_total_replayed_events = 10_000;
    limits.max_replay_stack_depth = 8;
    limits.max_alias_expansions_per_anchor = 100;
    limits
}

fn error_to_diagnostic(err: &serde_saphyr::Error, text: &str, file: FileId) -> Diagnostic {
    let offset = err.location().map_or(0, |loc| location_offset(&loc, text));
    let span = point_span(text, file, offset);
    let message = first_line(&err.without_snippet().to_string());
    let too_complex = match err.without_snippet() {
        serde_saphyr::Error::Budget { breach, .. } => Some(breach_words(breach)),
        _ => limit_words(&message),
    };
    if let Some(words) = too_complex {
        return Diagnostic::error(
            "manifest.too_complex",
            span,
            format!("this manifest is too complex to read: {words}"),
        )
        .with_label("reading stopped here")
        .with_reason(
            "manifests are read with limits on nesting, aliases and size so a hostile file cannot stall the check",
        )
        .with_fix("write the settings out plainly, without deep nesting or repeated aliases");
    }
    let message = strip_position(&message);
    Diagnostic::error(
        "manifest.invalid_yaml",
        span,
        format!("this manifest is not valid YAML: {message}"),
    )
    .with_label("the YAML cannot be read from here")
    .with_fix("correct the YAML at this point")
}

/// Budget breaches that reach us wrapped in another error, by their text.
fn limit_words(message: &str) -> Option<&'static str> {
    let lower = message.to_ascii_lowercase();
    if lower.contains("recursion limit") || lower.contains("depth") {
        Some("it nests too deeply")
    } else if lower.contains("alias") || lower.contains("anchor") {
        Some("its aliases expand too far")
    } else if lower.contains("budget") {
        Some("it exceeds the reading limits")
    } else {
        None
    }
}

/// The message without its trailing " at line L, column C": our renderers
/// show the position from the span.
fn strip_position(message: &str) -> &str {
    match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// Byte offset of a location: its byte offset when known, else from its
/// 1-based line and character column.
fn location_offset(loc: &serde_saphyr::Location, text: &str) -> u32 {
    if let Some(o) = loc.span().byte_offset() {
        return clamp_offset(o, text);
    }
    let (line, column) = (loc.line(), loc.column());
    if line == 0 {
        return 0;
    }
    let mut offset = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            let within: usize = l
                .chars()
                .take(column.saturating_sub(1) as usize)
                .map(char::len_utf8)
                .sum();
            return clamp_offset((offset + within) as u64, text);
        }
        offset += l.len();
    }
    clamp_offset(offset as u64, text)
}

fn breach_words(breach: &serde_saphyr::budget::BudgetBreach) -> &'static str {
    use serde_saphyr::budget::BudgetBreach as B;
    match breach {
        B::Depth { .. } => "it nests more than 24 levels deep",
        B::Aliases { .. } | B::AliasAnchorRatio { .. } => "it uses too many aliases",
        B::Anchors { .. } => "it defines too many anchors",
        B::RecordedAnchorEvents { .. } | B::RecordedAnchorBytes { .. } => {
            "its aliases expand too far"
        }
        B::Documents { .. } => "it holds more than one YAML document",
        B::Nodes { .. } | B::Events { .. } => "it holds too many values",
        B::ScalarBytes { .. } | B::InputBytes { .. } => "its text is too large",
        B::MergeKeys { .. } => "it uses too many merge keys",
        _ => "it exceeds the reading limits",
    }
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_string()
}

fn clamp_offset(offset: u64, text: &str) -> u32 {
    let max = text.len() as u64;
    u32::try_from(offset.min(max)).unwrap_or(u32::MAX)
}

/// A one-character span at `offset` (empty at the end of the text), on a
/// character boundary.
fn point_span(text: &str, file: FileId, offset: u32) -> Span {
    let start = offset as usize;
    let end = text
        .get(start..)
        .and_then(|rest| rest.chars().next())
        .map_or(start, |c| start + c.len_utf8());
    Span::new(file, offset, end as u32)
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<Value>::deserialize(deserializer)?;
        let loc = spanned.referenced.span();
        let start = loc.byte_offset().unwrap_or(0);
        let len = loc.byte_len().unwrap_or(0);
        let start = u32::try_from(start).unwrap_or(u32::MAX);
        let mut end = start.saturating_add(u32::try_from(len).unwrap_or(0));
        // Collections report only where they start; extend to their last child.
        end = end.max(children_end(&spanned.value));
        Ok(Node {
            value: spanned.value,
            start,
            end,
        })
    }
}

fn children_end(value: &Value) -> u32 {
    match value {
        Value::Seq(items) => items.iter().map(|n| n.end).max().unwrap_or(0),
        Value::Map(entries) => entries.iter().map(|(_, v)| v.end).max().unwrap_or(0),
        _ => 0,
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Int(i128::try_from(v).unwrap_or(i128::MAX)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Value::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Node>()? {
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(Value::Map(entries))
    }
}
