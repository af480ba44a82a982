//! Fuzz target: the language server's message handling, from bytes on its
//! stdin: the framing (`Content-Length` headers, bounded), the JSON-RPC
//! parse, and each request or notification handled as the server would
//! (in memory; replies are dropped). Nothing may panic or grow without
//! bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    jadpo::lsp::handle_bytes(data);
});
