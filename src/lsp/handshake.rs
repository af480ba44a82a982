//! The start of a session, by the protocol's rules: requests before
//! `initialize` are answered ServerNotInitialized (-32002), notifications
//! before it are dropped, and `exit` before it ends the server (status 1).
//! `initialize` is answered with the capabilities and `serverInfo`; the
//! session is open from then on (`initialized` needs no answer).

use lsp_server::{Connection, ErrorCode, Message, RequestId, Response};

/// How the start of a session ended.
pub enum Start {
    /// `initialize` was answered.
    Ready,
    /// The client sent `exit` first.
    Exit,
    /// The connection ended first.
    Gone,
}

pub fn handshake(connection: &Connection, capabilities: serde_json::Value) -> Start {
    let id = loop {
        match connection.receiver.recv() {
            Err(_) => return Start::Gone,
            Ok(Message::Request(req)) if req.method == "initialize" => break req.id,
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
    Start::Ready
}

fn not_initialized(connection: &Connection, id: RequestId) {
    let response = Response::new_err(
        id,
        ErrorCode::ServerNotInitialized as i32,
        "the server is not initialized yet: send `initialize` first".to_string(),
    );
    let _ = connection.sender.send(response.into());
}
