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
}

impl Default for ClientSupport {
    /// What a capable editor has (used where no handshake ran).
    fn default() -> Self {
        ClientSupport {
            related_information: true,
            hover_markdown: true,
            code_action_literals: true,
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
        ClientSupport {
            related_information: text["publishDiagnostics"]["relatedInformation"] == true,
            hover_markdown,
            code_action_literals: text["codeAction"]["codeActionLiteralSupport"].is_object(),
        }
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
