//! The stored record: step keys and sealed answers.

use jadpo_runtime::record::{step_key, Sealer};
use jadpo_runtime::value::hex;

#[test]
fn step_keys_follow_the_spec_and_fit_every_provider() {
    let key = step_key("test:a lost answer:1", 3, 0);
    // The loader refuses a provider whose `max_key_length:` is below this.
    assert_eq!(key.len() as u64, jadpo_compiler::manifest::STEP_KEY_LENGTH);
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut m = Vec::new();
    m.extend_from_slice(&20u32.to_le_bytes());
    m.extend_from_slice(b"test:a lost answer:1");
    m.extend_from_slice(&3u32.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    assert_eq!(key, hex(&blake3::derive_key("jadpo-step-key-v1", &m)));
    assert_ne!(key, step_key("test:a lost answer:1", 3, 1));
    assert_ne!(key, step_key("test:a lost answer:1", 2, 0));
}

#[test]
fn answers_open_only_with_their_key_and_place() {
    let s = Sealer::new("k1");
    let sealed = s.seal("d", 1, b"{\"answer\":1}");
    assert_eq!(
        s.open("d", 1, &sealed).as_deref(),
        Some(&b"{\"answer\":1}"[..])
    );
    assert_eq!(s.open("d", 2, &sealed), None);
    assert_eq!(Sealer::new("k2").open("d", 1, &sealed), None);
    assert_eq!(s.seal("d", 1, b"{\"answer\":1}"), sealed, "deterministic");
    assert_ne!(s.seal("d", 1, b"{\"answer\":2}").nonce, sealed.nonce);
}
