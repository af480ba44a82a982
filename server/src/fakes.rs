//! The providers of `jadpo dev --fakes FIXTURE`: a fixture's fakes, one
//! for the whole server, so its keys and its effect log outlive each
//! attempt as a provider's would.

use std::collections::BTreeMap;
use std::sync::Mutex;

use jadpo_compiler::ir::OpId;
use jadpo_runtime::fake::{Effect, Fake, Script};
use jadpo_runtime::provider::{Answer, Call, Provider};

use crate::engine::Providers;

pub struct SharedFake {
    fake: Mutex<Fake>,
}

impl SharedFake {
    pub fn new(scripts: BTreeMap<OpId, Script>) -> SharedFake {
        SharedFake {
            fake: Mutex::new(Fake::new(scripts)),
        }
    }

    /// The effects so far: (operation, key) pairs that acted.
    pub fn effects(&self) -> Vec<Effect> {
        self.fake
            .lock()
            .map(|f| f.effects().to_vec())
            .unwrap_or_default()
    }
}

/// One attempt's view: each send takes the lock for itself only.
struct Locked<'a>(&'a Mutex<Fake>);

impl Provider for Locked<'_> {
    fn send(&mut self, call: &Call<'_>) -> Answer {
        match self.0.lock() {
            Ok(mut fake) => fake.send(call),
            Err(_) => Answer::Unavailable,
        }
    }
}

impl Providers for SharedFake {
    fn provider(&self) -> Box<dyn Provider + '_> {
        Box::new(Locked(&self.fake))
    }
}
