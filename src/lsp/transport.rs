//! The server's stdio transport: LSP's base protocol (`Content-Length`
//! headers, then a JSON body) with bounds on what a client can make the
//! server hold. lsp-server's own transport trusts the length it is given
//! (a 3 GB `Content-Length` reserved 3 GB) and grows a header line without
//! end; here each header line, the number of headers and the body are
//! limited, a body that is not a message is answered with JSON-RPC's
//! ParseError or InvalidRequest, and the reason the server stopped is kept
//! for `run` to print.

use crossbeam_channel::{bounded, Receiver, Sender};
use lsp_server::{Connection, Message};
use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

/// The longest header line read.
pub const MAX_HEADER_LINE: usize = 8 * 1024;
/// The most header lines one message may have.
pub const MAX_HEADERS: usize = 32;
/// The largest message body read (a whole 1M-line app in one `didOpen` is
/// about 40 MB).
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The threads behind a [`Connection`] made by [`stdio`].
pub struct Transport {
    /// Why reading stopped, sent before the reader lets go of the
    /// connection (so it is there once the server sees the connection end).
    stopped: Receiver<String>,
    writer: JoinHandle<io::Result<()>>,
}

/// A connection over stdin and stdout.
pub fn stdio() -> (Connection, Transport) {
    let (to_client, outgoing) = bounded::<Message>(0);
    let (incoming, from_client) = bounded::<Message>(0);
    let (why, stopped) = bounded::<String>(1);
    let writer = std::thread::spawn(move || write_all(&outgoing));
    std::thread::spawn(move || {
        if let Err(reason) = read_all(&mut io::stdin().lock(), &incoming) {
            let _ = why.send(reason);
        }
        // `incoming` is dropped only now, after the reason is sent.
        drop(incoming);
    });
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    (connection, Transport { stopped, writer })
}

impl Transport {
    /// Waits for the writer to finish (the connection must be dropped
    /// first) and returns why reading stopped, if it stopped on its own.
    pub fn finish(self) -> Option<String> {
        let _ = self.writer.join();
        // The reader may still wait on stdin after the server chose to
        // stop; it is not waited for.
        self.stopped.try_recv().ok()
    }
}

/// Writes each message whole under the stdout lock, so a reply written by
/// the reader (a ParseError) never lands inside another message.
fn write_all(outgoing: &Receiver<Message>) -> io::Result<()> {
    for message in outgoing {
        let mut out = io::stdout().lock();
        message.write(&mut out)?;
        out.flush()?;
    }
    Ok(())
}

/// Reads messages until `exit`, the end of input or a broken frame.
fn read_all(input: &mut impl BufRead, incoming: &Sender<Message>) -> Result<(), String> {
    loop {
        let Some(body) = read_frame(input)? else {
            return Err("the client closed its end before sending `exit`".to_string());
        };
        let message = match parse(&body) {
            Ok(message) => message,
            Err(reply) => {
                write_raw(&reply).map_err(|e| format!("cannot write to the client: {e}"))?;
                continue;
            }
        };
        let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
        if incoming.send(message).is_err() || exit {
            return Ok(());
        }
    }
}

/// A message, or the JSON-RPC error reply for a body that is not one (its
/// `id` is null: the request's own cannot be known).
pub fn parse(body: &[u8]) -> Result<Message, String> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| error_reply(-32700, &format!("the message is not JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| {
        error_reply(
            -32600,
            &format!("the message is not a JSON-RPC request, response or notification: {e}"),
        )
    })
}

fn error_reply(code: i32, message: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    })
    .to_string()
}

fn write_raw(body: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

/// One message's body; `None` at the end of input between messages.
pub fn read_frame(input: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut length = None;
    for index in 0.. {
        if index > MAX_HEADERS {
            return Err(format!(
                "a message has more than {MAX_HEADERS} header lines"
            ));
        }
        let Some(line) = header_line(input, index == 0)? else {
            return Ok(None);
        };
        if line.is_empty() {
            break;
        }
        if let Some(value) = header_value(&line, "content-length") {
            length = Some(content_length(value)?);
        }
    }
    let length = length.ok_or("a message has no `Content-Length` header")?;
    let mut body = Vec::with_capacity(length.min(1 << 20));
    input
        .take(length as u64)
        .read_to_end(&mut body)
        .map_err(|e| format!("cannot read a message: {e}"))?;
    if body.len() < length {
        return Err(format!(
            "the input ended inside a message ({} of {length} bytes came)",
            body.len()
        ));
    }
    Ok(Some(body))
}

/// A header line without its line end; `None` when the input ends before
/// the first byte of a message (`first`), an error inside one.
fn header_line(input: &mut impl BufRead, first: bool) -> Result<Option<String>, String> {
    let mut line = Vec::new();
    input
        .take(MAX_HEADER_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("cannot read a message: {e}"))?;
    if line.is_empty() {
        return if first {
            Ok(None)
        } else {
            Err("the input ended inside a message's headers".to_string())
        };
    }
    if line.last() != Some(&b'\n') {
        return Err(if line.len() > MAX_HEADER_LINE {
            format!("a header line is longer than {MAX_HEADER_LINE} bytes")
        } else {
            "the input ended inside a message's headers".to_string()
        });
    }
    let text = String::from_utf8(line).map_err(|_| "a header line is not UTF-8".to_string())?;
    Ok(Some(text.trim_end_matches(['\r', '\n']).to_string()))
}

fn header_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let (key, value) = line.split_once(':')?;
    key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
}

fn content_length(value: &str) -> Result<usize, String> {
    let length: u64 = value
        .parse()
        .map_err(|_| format!("`Content-Length: {value}` is not a length in bytes"))?;
    if length > MAX_BODY as u64 {
        return Err(format!(
            "a message of {length} bytes is over the limit of {MAX_BODY} bytes"
        ));
    }
    Ok(length as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<Option<Vec<u8>>, String>> {
        let mut input = input;
        let mut out = Vec::new();
        loop {
            let frame = read_frame(&mut input);
            let stop = !matches!(frame, Ok(Some(_)));
            out.push(frame);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn reads_messages_and_ends_cleanly_between_them() {
        let got =
            frames(b"Content-Length: 2\r\n\r\n{}content-length:2\r\nContent-Type: x\r\n\r\n[]");
        assert_eq!(
            got,
            [Ok(Some(b"{}".to_vec())), Ok(Some(b"[]".to_vec())), Ok(None)]
        );
    }

    #[test]
    fn a_huge_length_is_refused_before_anything_is_reserved() {
        let got = frames(b"Content-Length: 10000000000\r\n\r\n{}");
        let err = got[0].clone().expect_err("refused");
        assert!(err.contains("over the limit"), "{err}");
    }

    #[test]
    fn broken_frames_say_what_is_wrong() {
        let long = [b"X-Pad: ".as_slice(), &vec![b'a'; MAX_HEADER_LINE + 10]].concat();
        let many = "X: y\r\n".repeat(MAX_HEADERS + 2) + "\r\n";
        let cases: [(&[u8], &str); 6] = [
            (b"Content-Length: -5\r\n\r\n", "not a length"),
            (b"Content-Type: x\r\n\r\n{}", "no `Content-Length`"),
            (b"Content-Length: 10\r\n\r\n{}", "ended inside a message"),
            (b"Content-Length: 2\r\n", "ended inside a message's headers"),
            (&long, "longer than"),
            (many.as_bytes(), "more than"),
        ];
        for (input, expected) in cases {
            let got = frames(input);
            let err = got[0].clone().expect_err("a broken frame");
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }

    #[test]
    fn a_body_that_is_not_a_message_gets_an_error_reply() {
        let reply = parse(b"not json").expect_err("not JSON");
        assert!(
            reply.contains("-32700") && reply.contains("\"id\":null"),
            "{reply}"
        );
        let reply = parse(b"{\"x\": 1}").expect_err("not a message");
        assert!(reply.contains("-32600"), "{reply}");
        assert!(parse(br#"{"jsonrpc":"2.0","method":"exit"}"#).is_ok());
    }
}
