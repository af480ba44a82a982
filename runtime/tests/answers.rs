//! What a recorded answer may be and how a listing shows it (design
//! `testing.md` section 9): the 1,048,576-byte limit is on the answer's own
//! canonical encoding, exactly at the limit recorded and one byte over a
//! fault whose step is listed as too large; an answer without an `id` is
//! listed by its first declared field, else by its type's name.

use jadpo_compiler::load::loaders::MemLoader;
use jadpo_runtime::record::MAX_ANSWER;
use jadpo_runtime::store::MemStore;
use jadpo_runtime::End;

use crate::support::{self, rec, text, App};
use jadpo_runtime::fake::Scripted;
use jadpo_runtime::value::Value;

const PACKAGE: &str = "package: blob
version: 1.0.0
provider:
  idempotency:
    header: Idempotency-Key
    window: 1h
  timeout: 5s
  attempts: 1
operations:
  blobs.create:
    request: BlobReq
    answer: Blob
    changes: true
    idempotent: true
  blobs.count:
    request: BlobReq
    answer: Count
    changes: true
    idempotent: true
  blobs.wrap:
    request: BlobReq
    answer: Wrapped
    changes: true
    idempotent: true
";

const TYPES: &str = "type BlobReq = Object {
    name: Text { max_length: 64 }
}

type Blob = Object {
    body: Text
    id: Text { max_length: 64 }
}

type Count = Object {
    total: Int
    note: Text? optional
}

type Wrapped = Object {
    inner: Count
}
";

const CODE: &str = "
action store_blob() -> Text {
    var b = attempt blob.blobs.create(blob.BlobReq { name: \"a\" })
    var c = attempt blob.blobs.count(blob.BlobReq { name: \"a\" })
    var w = attempt blob.blobs.wrap(blob.BlobReq { name: \"a\" })
    return b.id
}
";

fn app() -> App {
    let mut m: MemLoader = support::loader(CODE);
    m.insert(
        "app/jadpo.yaml",
        "app: shop\npackages: { pay: \"1\", pay_replays: \"1\", pay_newkey: \"1\", blob: \"1\" }\n"
            .as_bytes(),
    );
    m.insert("app/packages/blob/package.yaml", PACKAGE.as_bytes());
    m.insert("app/packages/blob/types.jadpo", TYPES.as_bytes());
    App::from_loader(&m, "app")
}

/// A `Blob` whose canonical encoding, `{"body":"…","id":"b_1"}`, is `size`
/// bytes.
fn blob_of_size(size: usize) -> Value {
    let overhead = br#"{"body":"","id":"b_1"}"#.len();
    let body = "x".repeat(size - overhead);
    let v = rec(&[("body", text(&body)), ("id", text("b_1"))]);
    assert_eq!(v.canonical().len(), size);
    v
}

fn count(total: i64) -> Scripted {
    Scripted::Answer(rec(&[("total", Value::Int(total))]))
}

fn run_with_blob(app: &App, blob: Value) -> jadpo_runtime::Outcome {
    let mut fake = app.fake(&[
        ("blob.blobs.create", vec![Scripted::Answer(blob)]),
        ("blob.blobs.count", vec![count(3)]),
        (
            "blob.blobs.wrap",
            vec![Scripted::Answer(rec(&[(
                "inner",
                rec(&[("total", Value::Int(1))]),
            )]))],
        ),
    ]);
    let d = support::delivery(app, "d_blob", "store_blob", vec![]);
    support::run(app, &d, &MemStore::new(), &mut fake, None)
}

#[test]
fn an_answer_of_exactly_the_limit_is_recorded() {
    let app = app();
    let out = run_with_blob(&app, blob_of_size(MAX_ANSWER));
    assert_eq!(out.end, End::Completed(text("b_1")), "{out:#?}");
}

#[test]
fn an_answer_one_byte_over_the_limit_faults_naming_its_size() {
    let app = app();
    let out = run_with_blob(&app, blob_of_size(MAX_ANSWER + 1));
    let End::Faulted(why) = &out.end else {
        panic!("{out:#?}");
    };
    assert!(
        why.contains("step 1 `blob.blobs.create` answered 1048577 bytes"),
        "{why}"
    );
    let step = &out.steps[0];
    assert_eq!(
        (step.state, step.detail.as_str()),
        ("too large", "1048577 bytes")
    );
}

#[test]
fn an_answer_without_an_id_is_listed_by_its_first_field_or_its_type() {
    let app = app();
    let out = run_with_blob(&app, blob_of_size(100));
    let details: Vec<(&str, &str)> = out
        .steps
        .iter()
        .map(|s| (s.state, s.detail.as_str()))
        .collect();
    assert_eq!(
        details,
        [
            ("answered", "b_1"),
            ("answered", "total: 3"),
            ("answered", "blob.Wrapped"),
        ]
    );
}
