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

#[test]
fn during_a_rotation_the_previous_key_still_opens_what_it_sealed() {
    let old = Sealer::new("k1").seal("d", 1, b"{\"answer\":1}");
    let rotating = Sealer::rotating("k2", Some("k1"));
    assert_eq!(
        rotating.open("d", 1, &old).as_deref(),
        Some(&b"{\"answer\":1}"[..])
    );
    // New answers are sealed with the new key alone.
    let new = rotating.seal("d", 2, b"{\"answer\":2}");
    assert_eq!(new, Sealer::new("k2").seal("d", 2, b"{\"answer\":2}"));
    assert_eq!(Sealer::new("k1").open("d", 2, &new), None);
    // Without it, or with an empty one, the old answer stays closed.
    assert_eq!(Sealer::rotating("k2", None).open("d", 1, &old), None);
    assert_eq!(Sealer::rotating("k2", Some("")).open("d", 1, &old), None);
    assert_eq!(Sealer::rotating("k2", Some("k3")).open("d", 1, &old), None);
}
