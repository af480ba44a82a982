//! `jadpo lsp`: the checker in the editor, a language server over stdio.
//!
//! One loop reads messages; edits only mark the app they belong to as
//! changed, and once no message is waiting the changed apps are checked
//! again and their diagnostics published, so a burst of keystrokes costs
//! one check. Requests are answered from a fresh check.

mod actions;
mod bundled;
mod complete;
mod convert;
mod find;
mod format;
mod handshake;
mod hover;
mod navigate;
mod scope;
pub mod text;
pub mod transport;
pub mod uri;
mod yaml_keys;

use crate::workspace::overlay::{clean, Overlay};
use crate::workspace::{find_root, Workspace};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, ExecuteCommand, Formatting,
    GotoDefinition, HoverRequest, RangeFormatting, References, Request as _,
};
use lsp_types::{
    CodeActionProviderCapability, DocumentSymbolResponse, GotoDefinitionResponse, Hover,
    HoverContents, HoverProviderCapability, MarkupContent, MarkupKind, OneOf,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use text::LineIndex;

/// Runs the server on stdin/stdout until the client says `exit`.
pub fn run() -> u8 {
    let (connection, transport) = transport::stdio();
    let capabilities = match serde_json::to_value(capabilities()) {
        Ok(value) => value,
        Err(_) => return 2,
    };
    let support = match handshake::handshake(&connection, capabilities) {
        handshake::Start::Ready(support) => support,
        handshake::Start::Exit => {
            eprintln!("error: jadpo lsp: stopped: the client sent `exit` before `initialize`");
            return 1;
        }
        handshake::Start::Gone => {
            drop(connection);
            let why = transport
                .finish()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            eprintln!("error: jadpo lsp: the client did not initialize{why}");
            return 1;
        }
    };
    let mut server = Server::new(connection, support);
    let clean_exit = server.main_loop();
    drop(server);
    let stopped = transport.finish();
    if clean_exit {
        0
    } else {
        let why = stopped.unwrap_or_else(|| "the client sent `exit` without `shutdown`".into());
        eprintln!("error: jadpo lsp: stopped: {why}");
        1
    }
}

/// Reads framed messages from `input` and handles each as the server
/// would, in memory (replies are dropped): the fuzzer's entry point for the
/// framing and the requests behind it.
#[doc(hidden)]
pub fn handle_bytes(input: &[u8]) {
    let (connection, _client) = Connection::memory();
    let mut server = Server::new(connection, handshake::ClientSupport::default());
    let mut input = input;
    while let Ok(Some(body)) = transport::read_frame(&mut input) {
        match transport::parse(&body) {
            Ok(Message::Request(req)) => {
                server.refresh();
                server.request(req);
            }
            Ok(Message::Notification(n)) => server.notification(n),
            Ok(Message::Response(_)) | Err(_) => {}
        }
    }
    server.refresh();
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_range_formatting_provider: Some(OneOf::Left(true)),
        execute_command_provider: Some(lsp_types::ExecuteCommandOptions {
            commands: vec![actions::APPLY_EDIT.to_string()],
            ..lsp_types::ExecuteCommandOptions::default()
        }),
        completion_provider: Some(lsp_types::CompletionOptions {
            trigger_characters: Some(vec![".".to_string()]),
            ..lsp_types::CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

struct Server {
    connection: Connection,
    overlay: Overlay,
    projects: Vec<Workspace>,
    /// What was last published per file, to send only what changed.
    published: HashMap<Uri, Vec<lsp_types::Diagnostic>>,
    /// Files edited since the last publish: always republished, so the
    /// client sees an answer to each edit.
    touched: BTreeSet<String>,
    /// When the oldest edit not yet answered arrived (for
    /// `JADPO_LSP_TIMING`).
    edited_at: Option<std::time::Instant>,
    /// What the client can take.
    support: handshake::ClientSupport,
    /// Each open document's URI as the client spelled it, by path: the
    /// diagnostics of a file go out under the client's own spelling.
    client_uris: HashMap<String, Uri>,
    /// Requests this server sent the client (`workspace/applyEdit`).
    sent: i32,
}

impl Server {
    fn new(connection: Connection, support: handshake::ClientSupport) -> Self {
        Server {
            support,
            client_uris: HashMap::new(),
            sent: 0,
            connection,
            overlay: Overlay::default(),
            projects: Vec::new(),
            published: HashMap::new(),
            touched: BTreeSet::new(),
            edited_at: None,
        }
    }

    /// Returns whether the client shut down before exiting.
    fn main_loop(&mut self) -> bool {
        let mut shut_down = false;
        while let Ok(message) = self.connection.receiver.recv() {
            let mut next = Some(message);
            while let Some(message) = next.take() {
                match message {
                    Message::Notification(n) if n.method == "exit" => return shut_down,
                    // After `shutdown` only `exit` is expected.
                    Message::Request(req) if shut_down => self.refuse(
                        req.id,
                        "the server is shutting down: only `exit` is expected",
                    ),
                    Message::Request(req) if req.method == "shutdown" => {
                        shut_down = true;
                        self.send(Message::Response(Response::new_ok(req.id, ())));
                    }
                    Message::Request(req) if req.method == "initialize" => {
                        self.refuse(req.id, "the server is already initialized");
                    }
                    Message::Request(req) => {
                        self.refresh();
                        self.request(req);
                    }
                    Message::Notification(_) if shut_down => {}
                    Message::Notification(n) => self.notification(n),
                    Message::Response(_) => {}
                }
                next = self.connection.receiver.try_recv().ok();
            }
            if !shut_down {
                self.refresh();
            }
        }
        shut_down
    }

    /// Answers a request that is out of place with InvalidRequest.
    fn refuse(&self, id: RequestId, why: &str) {
        let response = Response::new_err(id, ErrorCode::InvalidRequest as i32, why.to_string());
        self.send(Message::Response(response));
    }

    fn send(&self, message: Message) {
        let _ = self.connection.sender.send(message);
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    self.opened(&p.text_document.uri, p.text_document.text);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                {
                    self.changed(&p);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(n.params)
                {
                    if let Some(text) = p.text {
                        self.opened(&p.text_document.uri, text);
                    } else {
                        self.touch(&p.text_document.uri);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                {
                    if let Some(path) = uri::to_path(&p.text_document.uri) {
                        self.overlay.remove(&path.to_string_lossy());
                        self.touch(&p.text_document.uri);
                    }
                }
            }
            DidChangeWatchedFiles::METHOD => {
                self.overlay.forget_disk();
                for p in &mut self.projects {
                    p.dirty = true;
                }
            }
            _ => {}
        }
    }

    fn opened(&mut self, doc: &Uri, text: String) {
        let Some(path) = uri::to_path(doc) else {
            return;
        };
        self.client_uris
            .insert(clean(&path.to_string_lossy()), doc.clone());
        self.overlay.set(&path.to_string_lossy(), text);
        self.touch(doc);
    }

    fn changed(&mut self, p: &lsp_types::DidChangeTextDocumentParams) {
        let Some(path) = uri::to_path(&p.text_document.uri) else {
            return;
        };
        let key = path.to_string_lossy();
        if self.overlay.get(&key).is_none() {
            // A change to a document never opened: start from the disk, read
            // by the loader's rules (regular files only, bounded), so
            // `/dev/zero` or a named pipe cannot take the server down.
            use jadpo_compiler::load::Loader as _;
            match jadpo_compiler::load::FsLoader.read_string(&key) {
                Ok(Ok(disk)) => self.overlay.set(&key, disk),
                Ok(Err(_)) | Err(_) => {
                    eprintln!("jadpo lsp: ignoring a change to {key}: it was never opened and cannot be read as a text file");
                    return;
                }
            }
        }
        if let Some(text) = self.overlay.get_mut(&key) {
            for change in &p.content_changes {
                text::apply_change(text, change.range, &change.text);
            }
        }
        self.touch(&p.text_document.uri);
    }

    /// Marks the app holding a document as changed (finding the app the
    /// first time one of its files is seen).
    fn touch(&mut self, doc: &Uri) {
        self.edited_at.get_or_insert_with(std::time::Instant::now);
        let Some(path) = uri::to_path(doc) else {
            return;
        };
        self.touched.insert(clean(&path.to_string_lossy()));
        if let Some(i) = self.project_index(&path) {
            if let Some(p) = self.projects.get_mut(i) {
                p.dirty = true;
            }
        }
    }

    fn project_index(&mut self, path: &Path) -> Option<usize> {
        let known = self
            .projects
            .iter()
            .enumerate()
            .filter(|(_, p)| path.starts_with(&p.root))
            .max_by_key(|(_, p)| p.root.components().count())
            .map(|(i, _)| i);
        let root = find_root(path)?;
        match known {
            Some(i) if self.projects.get(i).is_some_and(|p| p.root == root) => Some(i),
            _ => {
                self.projects.push(Workspace::keeping(root));
                Some(self.projects.len() - 1)
            }
        }
    }

    /// Checks every changed app again and publishes what changed: first
    /// the edited files, which the author waits for, then the others.
    #[allow(clippy::mutable_key_type)] // see `actions::workspace_edit`
    fn refresh(&mut self) {
        let mut fresh: Vec<(Uri, Vec<lsp_types::Diagnostic>)> = Vec::new();
        let mut owned: BTreeSet<Uri> = BTreeSet::new();
        let mut seen: BTreeSet<Uri> = BTreeSet::new();
        let mut any = false;
        let mut answered = None;
        for i in 0..self.projects.len() {
            let Some(project) = self.projects.get_mut(i).filter(|p| p.dirty) else {
                continue;
            };
            any = true;
            project.analyse(&self.overlay);
            let (first, edited) = self.edited_first(i);
            for (doc, list) in first {
                seen.insert(doc.clone());
                self.publish(doc, list);
            }
            answered.get_or_insert_with(std::time::Instant::now);
            let Some(project) = self.projects.get(i) else {
                continue;
            };
            if let Some(snap) = &project.snapshot {
                fresh.extend(convert::by_file(project, snap, |f| !edited.contains(&f)));
                let root = &project.root;
                owned.extend(self.published.keys().filter(|u| under(u, root)).cloned());
            }
        }
        if !any {
            self.touched.clear();
            self.edited_at = None;
            return;
        }
        for (doc, list) in fresh {
            seen.insert(doc.clone());
            self.publish(doc, list);
        }
        // Files that had findings and have none now, and edited files.
        let touched: Vec<Uri> = std::mem::take(&mut self.touched)
            .iter()
            .filter_map(|p| uri::from_path(Path::new(p)))
            .collect();
        for doc in owned.into_iter().chain(touched) {
            if !seen.contains(&doc) {
                seen.insert(doc.clone());
                self.publish(doc, Vec::new());
            }
        }
        let published = std::time::Instant::now();
        for project in &mut self.projects {
            project.retire();
        }
        let edited_at = self.edited_at.take();
        if std::env::var_os("JADPO_LSP_TIMING").is_some() {
            let since = |t: std::time::Instant| {
                let d = t.saturating_duration_since(edited_at.unwrap_or(published));
                d.as_secs_f64() * 1000.0
            };
            eprintln!(
                "jadpo lsp: edited files published {:.1}ms after the edit, all {:.1}ms after, retired in {:.1}ms",
                since(answered.unwrap_or(published)),
                since(published),
                published.elapsed().as_secs_f64() * 1000.0
            );
        }
    }

    /// The diagnostics of the edited files of project `i` (none for an
    /// edited file without findings), and those files.
    fn edited_first(
        &self,
        i: usize,
    ) -> (
        Vec<(Uri, Vec<lsp_types::Diagnostic>)>,
        BTreeSet<jadpo_compiler::span::FileId>,
    ) {
        let Some(project) = self.projects.get(i) else {
            return Default::default();
        };
        let Some(snap) = &project.snapshot else {
            return Default::default();
        };
        let edited: BTreeSet<_> = (self.touched.iter())
            .filter_map(|p| snap.file_at(p))
            .collect();
        let mut first = convert::by_file(project, snap, |f| edited.contains(&f));
        for path in &self.touched {
            let doc = snap
                .file_at(path)
                .and_then(|_| uri::from_path(Path::new(path)));
            if let Some(doc) = doc.filter(|d| !first.iter().any(|(u, _)| u == d)) {
                first.push((doc, Vec::new()));
            }
        }
        (first, edited)
    }

    /// Publishes a file's diagnostics. `doc` is the server's spelling of the
    /// file's URI, the key of everything kept here; the notification goes
    /// out under the client's own spelling when it opened the file.
    fn publish(&mut self, doc: Uri, mut list: Vec<lsp_types::Diagnostic>) {
        let path = uri::to_path(&doc).map(|p| clean(&p.to_string_lossy()));
        let wire = path
            .as_ref()
            .and_then(|p| self.client_uris.get(p).cloned())
            .unwrap_or_else(|| doc.clone());
        let edited = path.is_some_and(|p| self.touched.contains(&p));
        if !self.support.related_information {
            for d in &mut list {
                d.related_information = None;
            }
        }
        if !edited && self.published.get(&doc) == Some(&list) {
            return;
        }
        let params = PublishDiagnosticsParams::new(wire, list.clone(), None);
        self.send(Message::Notification(Notification::new(
            PublishDiagnostics::METHOD.to_string(),
            params,
        )));
        if list.is_empty() {
            self.published.remove(&doc);
        } else {
            self.published.insert(doc, list);
        }
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => self.hover(req.params),
            GotoDefinition::METHOD => self.definition(req.params),
            References::METHOD => self.references(req.params),
            DocumentSymbolRequest::METHOD => self.symbols(req.params),
            CodeActionRequest::METHOD => self.code_actions(req.params),
            ExecuteCommand::METHOD => self.execute_command(req.params),
            Completion::METHOD => self.completion(req.params),
            Formatting::METHOD | RangeFormatting::METHOD => {
                match self.formatting(req.method == RangeFormatting::METHOD, req.params) {
                    Err(Refusal::Failed(message)) => {
                        let code = lsp_server::ErrorCode::RequestFailed as i32;
                        self.send(Message::Response(Response::new_err(id, code, message)));
                        return;
                    }
                    Err(Refusal::Invalid(message)) => Err(message),
                    Ok(value) => Ok(value),
                }
            }
            _ => {
                let message = format!("jadpo lsp does not handle `{}`", req.method);
                self.send(Message::Response(Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    message,
                )));
                return;
            }
        };
        self.answer(id, result);
    }

    fn answer(&self, id: RequestId, result: Result<serde_json::Value, String>) {
        let response = match result {
            Ok(value) => Response::new_ok(id, value),
            Err(message) => Response::new_err(id, ErrorCode::InvalidParams as i32, message),
        };
        self.send(Message::Response(response));
    }

    /// The app, file and byte offset of a document position.
    fn locate(
        &mut self,
        doc: &Uri,
        pos: Option<lsp_types::Position>,
    ) -> Option<(usize, jadpo_compiler::span::FileId, usize)> {
        let path = uri::to_path(doc)?;
        let i = self.project_index(&path)?;
        let project = self.projects.get_mut(i)?;
        if project.snapshot.is_none() {
            project.analyse(&self.overlay);
        }
        let snap = project.snapshot.as_ref()?;
        let file = snap.file_at(&clean(&path.to_string_lossy()))?;
        let text = &snap.files.get(file).text;
        let offset = pos.map_or(0, |p| LineIndex::new(text).offset(p));
        Some((i, file, offset))
    }

    fn hover(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::HoverParams = parse(params)?;
        let at = &p.text_document_position_params;
        let found = self
            .locate(&at.text_document.uri, Some(at.position))
            .and_then(|(i, file, offset)| {
                let snap = self.projects.get(i)?.snapshot.as_ref()?;
                hover::hover(snap, file, offset)
            });
        let markdown = self.support.hover_markdown;
        let hover = found.map(|value| Hover {
            contents: HoverContents::Markup(if markdown {
                MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                }
            } else {
                MarkupContent {
                    kind: MarkupKind::PlainText,
                    value: crate::render::plain_text(&value),
                }
            }),
            range: None,
        });
        to_json(hover)
    }

    fn definition(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::GotoDefinitionParams = parse(params)?;
        let at = &p.text_document_position_params;
        let found = self
            .locate(&at.text_document.uri, Some(at.position))
            .and_then(|(i, file, offset)| {
                let project = self.projects.get(i)?;
                navigate::definition(project, project.snapshot.as_ref()?, file, offset)
            });
        to_json(found.map(GotoDefinitionResponse::Scalar))
    }

    fn references(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::ReferenceParams = parse(params)?;
        let at = &p.text_document_position;
        let found = self
            .locate(&at.text_document.uri, Some(at.position))
            .and_then(|(i, file, offset)| {
                let project = self.projects.get(i)?;
                let snap = project.snapshot.as_ref()?;
                Some(navigate::references(
                    project,
                    snap,
                    file,
                    offset,
                    p.context.include_declaration,
                ))
            });
        to_json(found)
    }

    fn symbols(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::DocumentSymbolParams = parse(params)?;
        let found = self
            .locate(&p.text_document.uri, None)
            .and_then(|(i, file, _)| {
                let snap = self.projects.get(i)?.snapshot.as_ref()?;
                Some(DocumentSymbolResponse::Nested(navigate::symbols(
                    snap, file,
                )))
            });
        to_json(found)
    }

    /// Completion items with only the kinds the client declared it shows.
    fn shown_kinds(
        &self,
        mut items: Vec<lsp_types::CompletionItem>,
    ) -> Vec<lsp_types::CompletionItem> {
        for item in &mut items {
            item.kind = item.kind.and_then(|k| self.support.completion_kind(k));
        }
        items
    }

    fn completion(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::CompletionParams = parse(params)?;
        let at = &p.text_document_position;
        // The text as the client has it now (the analysis may not have
        // caught up with the last keystroke), the program as last analysed.
        let current = uri::to_path(&at.text_document.uri)
            .and_then(|p| self.overlay.get(&p.to_string_lossy()).cloned());
        if uri::to_path(&at.text_document.uri)
            .is_some_and(|p| p.file_name().is_some_and(|n| n == "package.yaml"))
        {
            let text = match current {
                Some(text) => text,
                None => self.document_text(&at.text_document.uri)?,
            };
            let offset = LineIndex::new(&text).offset(at.position);
            let items = self.shown_kinds(yaml_keys::complete(&text, offset));
            return to_json(lsp_types::CompletionResponse::Array(items));
        }
        let found = self
            .locate(&at.text_document.uri, None)
            .and_then(|(i, file, _)| {
                let snap = self.projects.get(i)?.snapshot.as_ref()?;
                let program = snap.program.as_ref()?;
                let analysed = &snap.files.get(file).text;
                let text = current.as_deref().unwrap_or(analysed);
                // A text over the source limit is never parsed (the check
                // refused it too).
                if text.len() as u64 > jadpo_compiler::load::MAX_SOURCES_BYTES {
                    return None;
                }
                let offset = LineIndex::new(text).offset(at.position);
                // Scopes come from the text as it is now: the analysed
                // tree when the analysis has caught up, else a parse of
                // this one file.
                let fresh;
                let ast = match snap.asts.iter().find(|a| a.file == file) {
                    Some(ast) if **analysed == *text => ast,
                    _ => {
                        fresh = jadpo_compiler::parser::parse_file(file, text).0;
                        &fresh
                    }
                };
                Some(complete::complete(program, ast, text, offset))
            });
        let found = found.map(|items| self.shown_kinds(items));
        to_json(found.map(lsp_types::CompletionResponse::Array))
    }

    /// The document's text as the client has it (open), else on disk.
    fn document_text(&self, doc: &Uri) -> Result<String, String> {
        let path = uri::to_path(doc).ok_or("not a file URI")?;
        let key = path.to_string_lossy().into_owned();
        if let Some(text) = self.overlay.get(&key) {
            return Ok(text.clone());
        }
        let bytes = jadpo_compiler::load::Loader::read(&jadpo_compiler::load::FsLoader, &key)
            .map_err(|e| format!("cannot read the file: {e}"))?;
        String::from_utf8(bytes).map_err(|_| "the file is not UTF-8 text".to_string())
    }

    /// The whole document's formatting, or (`range`) a range's.
    fn formatting(
        &mut self,
        range: bool,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, Refusal> {
        let (doc, range) = if range {
            let p: lsp_types::DocumentRangeFormattingParams =
                parse(params).map_err(Refusal::Invalid)?;
            (p.text_document.uri, Some(p.range))
        } else {
            let p: lsp_types::DocumentFormattingParams = parse(params).map_err(Refusal::Invalid)?;
            (p.text_document.uri, None)
        };
        if uri::to_path(&doc).is_none() {
            return Err(Refusal::Invalid("not a file URI".into()));
        }
        let text = self.document_text(&doc).map_err(Refusal::Failed)?;
        let edits = match range {
            Some(range) => format::range_formatting(&text, range),
            None => format::formatting(&text),
        };
        to_json(edits.map_err(Refusal::Failed)?).map_err(Refusal::Invalid)
    }

    fn code_actions(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::CodeActionParams = parse(params)?;
        let found = self
            .locate(&p.text_document.uri, Some(p.range.start))
            .and_then(|(i, file, start)| {
                let project = self.projects.get(i)?;
                let snap = project.snapshot.as_ref()?;
                let end = LineIndex::new(&snap.files.get(file).text).offset(p.range.end);
                Some(actions::code_actions(project, snap, file, start, end))
            });
        let found = found.unwrap_or_default();
        if self.support.code_action_literals {
            return to_json(found);
        }
        to_json(actions::as_commands(found))
    }

    /// `workspace/executeCommand` for [`actions::APPLY_EDIT`]: the server
    /// asks the client to apply the quick fix's edit.
    fn execute_command(&mut self, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let p: lsp_types::ExecuteCommandParams = parse(params)?;
        if p.command != actions::APPLY_EDIT {
            return Err(format!("jadpo lsp has no command `{}`", p.command));
        }
        let [title, edit]: [serde_json::Value; 2] = p
            .arguments
            .try_into()
            .map_err(|_| "the command takes a title and an edit".to_string())?;
        let edit: lsp_types::WorkspaceEdit = parse(edit)?;
        self.sent += 1;
        let params = lsp_types::ApplyWorkspaceEditParams {
            label: title.as_str().map(str::to_string),
            edit,
        };
        self.send(Message::Request(Request::new(
            RequestId::from(format!("jadpo-apply-{}", self.sent)),
            "workspace/applyEdit".to_string(),
            params,
        )));
        Ok(serde_json::Value::Null)
    }
}

fn under(doc: &Uri, root: &Path) -> bool {
    uri::to_path(doc).is_some_and(|p| p.starts_with(root))
}

fn parse<T: serde::de::DeserializeOwned>(params: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| format!("invalid parameters: {e}"))
}

fn to_json<T: serde::Serialize>(value: T) -> Result<serde_json::Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// Exposed for the latency benchmark: the path of the app folder above a file.
pub fn app_root(path: &Path) -> Option<PathBuf> {
    find_root(path)
}

/// Why a request gets an error answer: bad parameters, or a request that
/// was understood and could not be carried out.
enum Refusal {
    Invalid(String),
    Failed(String),
}
