//! The start of a session, by the protocol's rules: requests before
//! `initialize` are answered ServerNotInitialized (-32002), notifications
//! before it are dropped, and `exit` before it ends the server (status 1).
//! `initialize` is answered with the capabilities and `serverInfo`; the
//! session is open from then on (`initialized` needs no answer).

use lsp_server::{Connection, ErrorCode, Message, RequestId, Response};

/// How the start of a session ended.
pub enum Start {
    /// `initialize` was answered; what the client said it supports.
    Ready(ClientSupport),
    /// The client sent `exit` first.
    Exit,
    /// The connection ended first.
    Gone,
}

pub fn handshake(connection: &Connection, capabilities: serde_json::Value) -> Start {
    let (id, params) = loop {
        match connection.receiver.recv() {
            Err(_) => return Start::Gone,
            Ok(Message::Request(req)) if req.method == "initialize" => break (req.id, req.params),
            Ok(Message::Request(req)) => not_initialized(connection, req.id),
            Ok(Message::Notification(n)) if n.method == "exit" => return Start::Exit,
            Ok(Message::Notification(_) | Message::Response(_)) => {}
        }
    };
    let result = serde_json::json!({
        "capabilities": capabilities,
        "serverInfo": { "name": "jadpo", "version": env!("CARGO_PKG_VERSION") },
    });
    let _ = connection.sender.send(Response::new_ok(id, result).into());
    Start::Ready(ClientSupport::from_params(&params))
}

/// The parts of the client's capabilities the answers depend on. A client
/// that leaves a capability out does not have it (LSP 3.17), except
/// Markdown hover, which clients that say nothing about it render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSupport {
    /// `publishDiagnostics.relatedInformation`.
    pub related_information: bool,
    /// `hover.contentFormat` lists `markdown` (or is not given).
    pub hover_markdown: bool,
    /// `codeAction.codeActionLiteralSupport`: else quick fixes go as
    /// commands the server carries out.
    pub code_action_literals: bool,
    /// The completion item kinds it shows (bit `k` for kind `k`):
    /// `completion.completionItemKind.valueSet`, else 1 to 18, the kinds
    /// of the protocol's first version.
    pub completion_kinds: u64,
}

/// Kinds 1 (Text) to 18 (Reference): what a client that declares no
/// `valueSet` shows.
pub const FIRST_KINDS: u64 = ((1u64 << 19) - 1) & !1;

impl Default for ClientSupport {
    /// What a capable editor has (used where no handshake ran).
    fn default() -> Self {
        ClientSupport {
            related_information: true,
            hover_markdown: true,
            code_action_literals: true,
            completion_kinds: !1,
        }
    }
}

impl ClientSupport {
    pub fn from_params(params: &serde_json::Value) -> Self {
        let text = &params["capabilities"]["textDocument"];
        let hover_markdown = match text["hover"]["contentFormat"].as_array() {
            Some(formats) => formats.first().is_some_and(|f| f == "markdown"),
            None => true,
        };
        let completion_kinds = match text["completion"]["completionItemKind"]["valueSet"].as_array()
        {
            Some(kinds) => kinds
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .filter(|k| (1..64).contains(k))
                .fold(0, |set, k| set | (1 << k)),
            None => FIRST_KINDS,
        };
        ClientSupport {
            related_information: text["publishDiagnostics"]["relatedInformation"] == true,
            hover_markdown,
            code_action_literals: text["codeAction"]["codeActionLiteralSupport"].is_object(),
            completion_kinds,
        }
    }
}

impl ClientSupport {
    /// `kind` where the client shows it; else the nearest kind of the
    /// protocol's first version (a struct or an event as a class), or no
    /// kind at all.
    pub fn completion_kind(
        &self,
        kind: lsp_types::CompletionItemKind,
    ) -> Option<lsp_types::CompletionItemKind> {
        use lsp_types::CompletionItemKind as K;
        let shown = |k: K| {
            serde_json::to_value(k)
                .ok()
                .and_then(|v| v.as_u64())
                .is_some_and(|n| n < 64 && self.completion_kinds & (1 << n) != 0)
        };
        let fallback = match kind {
            K::STRUCT | K::EVENT | K::ENUM_MEMBER | K::TYPE_PARAMETER => K::CLASS,
            K::CONSTANT | K::OPERATOR => K::VALUE,
            K::FOLDER => K::MODULE,
            _ => K::TEXT,
        };
        [kind, fallback].into_iter().find(|k| shown(*k))
    }
}

fn not_initialized(connection: &Connection, id: RequestId) {
    let response = Response::new_err(
        id,
        ErrorCode::ServerNotInitialized as i32,
        "the server is not initialized yet: send `initialize` first".to_string(),
    );
    let _ = connection.sender.send(response.into());
}
