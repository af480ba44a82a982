//! Several stores as one (design section 14.5): a delivery whose row lives
//! in its home store and whose action keeps its record in another, on
//! every kind of store.

use std::sync::Arc;

use jadpo_runtime::store::{
    ClaimRequest, Claimed, Commits, DeliveryState, Fenced, Items, Lease, Next, Operate, Operated,
    Queue, Records, Store, ADOPTED_QUEUE,
};
use jadpo_server::store::several::{Placement, Several};

use crate::conformance::kinds;
use crate::support::*;

/// `primary` and `ledger`, and the two as one: action `charge` keeps its
/// record in `ledger`.
fn stores(kind: &Kind, case: &str) -> (Arc<dyn Store>, Arc<dyn Store>, Several) {
    let primary = kind.open_named(&format!("{case}_p"), program(), "primary");
    let ledger = kind.open_named(&format!("{case}_l"), program(), "ledger");
    let placement = Placement {
        records: [("charge".to_string(), "ledger".to_string())].into(),
        entities: Default::default(),
        default: "primary".into(),
    };
    let several = Several::new(vec![primary.clone(), ledger.clone()], &placement);
    (primary, ledger, several)
}

/// A delivery of `charge` inserted in `primary`, as a commit there
/// inserts a subscriber's.
fn emitted(primary: &dyn Store, id: &str) {
    let past = later(now(), -1000);
    primary
        .enqueue(&[delivery(id, "default", 0, past)], now())
        .expect("enqueued");
}

fn claim_at(store: &dyn Store, at: jadpo_runtime::value::Instant, lease_ms: u64) -> Vec<Claimed> {
    store
        .claim(&ClaimRequest {
            queues: vec![],
            max: 10,
            lease_ms,
            runner: "r1".into(),
            now: at,
        })
        .expect("a claim")
}

fn state(store: &dyn Store, id: &str) -> Option<DeliveryState> {
    store.delivery(id).unwrap().map(|d| d.state)
}

#[test]
fn a_delivery_runs_in_its_actions_record_store_and_completes_at_home() {
    for kind in kinds() {
        let label = format!("several on {}", kind.label());
        let (primary, ledger, several) = stores(&kind, "several_run");
        emitted(&*primary, "d1");
        let c = claim_at(&several, now(), 60_000).pop().expect("claimed");
        let copy = ledger.delivery("d1").unwrap().expect("adopted");
        assert_eq!(copy.queue, ADOPTED_QUEUE, "{label}");
        assert_eq!(copy.lease_generation, c.lease.generation, "{label}");
        several
            .put_step("d1", &c.lease, &record(), &step(1, true))
            .unwrap();
        assert!(primary.record("d1").unwrap().is_none(), "{label}");
        assert_eq!(
            ledger.record("d1").unwrap().expect("a record").steps.len(),
            1
        );
        several.heartbeat("d1", &c.lease, 60_000, now()).unwrap();
        several
            .commit(&commit_of("d1", Vec::new()), &c.lease)
            .unwrap();
        assert!(ledger.handled("d1").unwrap(), "{label}");
        assert!(several.handled("d1").unwrap(), "{label}");
        assert_eq!(
            state(&*primary, "d1"),
            Some(DeliveryState::Completed),
            "{label}"
        );
        // Operators see the delivery once, as its home holds it.
        let all = several.list(&jadpo_runtime::store::ListFilter {
            not_done: false,
            state: None,
            action: None,
            since: None,
            limit: 10,
        });
        let all = all.unwrap();
        assert_eq!(all.len(), 1, "{label}");
        assert_eq!(all[0].queue, "default", "{label}");
        assert_eq!(
            several.ids_starting("d", 10).unwrap(),
            vec!["d1"],
            "{label}"
        );
    }
}

#[test]
fn a_claim_after_the_commit_landed_completes_without_running() {
    for kind in kinds() {
        let label = format!("several rescue on {}", kind.label());
        let (primary, ledger, several) = stores(&kind, "several_rescue");
        emitted(&*primary, "d1");
        let c = claim_at(&several, now(), 1).pop().expect("claimed");
        // The commit landed in the record store; the process died before
        // the home row was completed.
        ledger
            .commit(&commit_of("d1", Vec::new()), &c.lease)
            .unwrap();
        assert_eq!(
            state(&*primary, "d1"),
            Some(DeliveryState::Running),
            "{label}"
        );
        let rescued = claim_at(&several, later(now(), 5_000), 60_000);
        assert!(rescued.is_empty(), "{label}: it ran again");
        assert_eq!(
            state(&*primary, "d1"),
            Some(DeliveryState::Completed),
            "{label}"
        );
    }
}

#[test]
fn a_later_claim_fences_the_earlier_runner_in_the_record_store() {
    for kind in kinds() {
        let label = format!("several fence on {}", kind.label());
        let (primary, _ledger, several) = stores(&kind, "several_fence");
        emitted(&*primary, "d1");
        let first = claim_at(&several, now(), 1).pop().expect("claimed");
        let second = claim_at(&several, later(now(), 5_000), 60_000)
            .pop()
            .expect("rescued");
        assert!(second.rescued, "{label}");
        let lost = several.put_step("d1", &first.lease, &record(), &step(1, true));
        assert_eq!(lost, Err(Fenced::LeaseLost), "{label}");
        several
            .put_step("d1", &second.lease, &record(), &step(1, true))
            .unwrap();
        let stale: Lease = first.lease;
        let commit = several.commit(&commit_of("d1", Vec::new()), &stale);
        assert!(commit.is_err(), "{label}");
        assert!(!several.handled("d1").unwrap(), "{label}");
    }
}

#[test]
fn an_ended_delivery_ends_alike_in_both_stores_and_retries_from_its_record() {
    for kind in kinds() {
        let label = format!("several ends on {}", kind.label());
        let (primary, ledger, several) = stores(&kind, "several_end");
        emitted(&*primary, "d1");
        let c = claim_at(&several, now(), 60_000).pop().expect("claimed");
        several
            .put_step("d1", &c.lease, &record(), &step(1, false))
            .unwrap();
        let next = Next::End {
            state: DeliveryState::OutcomeUnknown,
            why: "no answer".into(),
            steps: Vec::new(),
            response: None,
        };
        several.release("d1", &c.lease, &next, now()).unwrap();
        let ended = Some(DeliveryState::OutcomeUnknown);
        assert_eq!(state(&*primary, "d1"), ended, "{label}");
        assert_eq!(state(&*ledger, "d1"), ended, "{label}");
        assert_eq!(several.items(true).unwrap().len(), 1, "{label}");
        // The step in doubt is in the record store; the retry reads it.
        let plain = several.retry("d1", false, "ops", now()).unwrap();
        assert!(matches!(plain, Operated::Refused(_)), "{label}: {plain:?}");
        let retried = several.retry("d1", true, "ops", now()).unwrap();
        assert_eq!(retried, Operated::Done, "{label}");
        assert!(several.items(true).unwrap().is_empty(), "{label}");
        let again = claim_at(&several, now(), 60_000)
            .pop()
            .expect("claimed again");
        assert!(again.lease.generation > c.lease.generation, "{label}");
        let rec = several.record("d1").unwrap().expect("the record");
        assert_eq!(rec.steps.len(), 1, "{label}");
    }
}

#[test]
fn operators_abandon_and_forget_a_delivery_in_both_stores() {
    for kind in kinds() {
        let label = format!("several operators on {}", kind.label());
        let (primary, ledger, several) = stores(&kind, "several_ops");
        emitted(&*primary, "d1");
        let c = claim_at(&several, now(), 60_000).pop().expect("claimed");
        let next = Next::End {
            state: DeliveryState::Failed,
            why: "refused".into(),
            steps: Vec::new(),
            response: None,
        };
        several.release("d1", &c.lease, &next, now()).unwrap();
        let done = several
            .abandon("d1", "by hand", "ops", None, now())
            .unwrap();
        assert_eq!(done, Operated::Done, "{label}");
        let abandoned = Some(DeliveryState::Abandoned);
        assert_eq!(state(&*primary, "d1"), abandoned, "{label}");
        assert_eq!(state(&*ledger, "d1"), abandoned, "{label}");
        assert!(several.items(true).unwrap().is_empty(), "{label}");
        assert_eq!(several.forget("d1").unwrap(), Operated::Done, "{label}");
        assert_eq!(state(&*primary, "d1"), None, "{label}");
        assert_eq!(state(&*ledger, "d1"), None, "{label}");
    }
}

/// A store that cannot be reached: every operation says so.
struct Down;

fn down() -> jadpo_runtime::store::StoreError {
    use jadpo_runtime::store::{ErrorKind, StoreError};
    StoreError::new("ledger", ErrorKind::Unreachable, "the test's store is down")
}

mod down_impl {
    use super::{down, Down};
    use jadpo_compiler::intern::Name;
    use jadpo_compiler::ir::EntityId;
    use jadpo_runtime::record::{StepRow, StoredRecord};
    use jadpo_runtime::store::*;
    use jadpo_runtime::value::{Instant, Value};

    type R<T> = std::result::Result<T, StoreError>;

    impl Records for Down {
        fn record(&self, _: &str) -> R<Option<StoredRecord>> {
            Err(down())
        }
        fn put_step(
            &self,
            _: &str,
            _: &Lease,
            _: &StoredRecord,
            _: &StepRow,
        ) -> std::result::Result<(), Fenced> {
            Err(Fenced::Store(down()))
        }
        fn truncate_steps(&self, _: &str, _: &Lease, _: u32) -> std::result::Result<(), Fenced> {
            Err(Fenced::Store(down()))
        }
    }
    impl Rows for Down {
        fn select(&self, _: EntityId, _: &[(Name, Value)]) -> R<Vec<Row>> {
            Err(down())
        }
    }
    impl Commits for Down {
        fn commit(&self, _: &Commit, _: &Lease) -> std::result::Result<(), CommitError> {
            Err(CommitError::Store(down()))
        }
    }
    impl Queue for Down {
        fn enqueue(&self, _: &[NewDelivery], _: Instant) -> R<()> {
            Err(down())
        }
        fn claim(&self, _: &ClaimRequest) -> R<Vec<Claimed>> {
            Err(down())
        }
        fn take(&self, _: &str, _: u64, _: Instant) -> R<Option<Lease>> {
            Err(down())
        }
        fn heartbeat(
            &self,
            _: &str,
            _: &Lease,
            _: u64,
            _: Instant,
        ) -> std::result::Result<Lease, Fenced> {
            Err(Fenced::Store(down()))
        }
        fn release(
            &self,
            _: &str,
            _: &Lease,
            _: &Next,
            _: Instant,
        ) -> std::result::Result<(), Fenced> {
            Err(Fenced::Store(down()))
        }
        fn delivery(&self, _: &str) -> R<Option<DeliveryRow>> {
            Err(down())
        }
        fn adopt(&self, _: &DeliveryRow, _: &Lease) -> R<Adopted> {
            Err(down())
        }
        fn handled(&self, _: &str) -> R<bool> {
            Err(down())
        }
        fn tick(&self, _: &str, _: u64, _: &NewDelivery, _: Instant) -> R<bool> {
            Err(down())
        }
        fn events(&self, _: usize) -> R<Vec<Outboxed>> {
            Err(down())
        }
    }
    impl RouteKeys for Down {
        fn claim_key(&self, _: &KeyRequest) -> R<KeyClaim> {
            Err(down())
        }
        fn release_key(
            &self,
            _: &str,
            _: &str,
            _: &str,
            _: &Lease,
        ) -> std::result::Result<(), Fenced> {
            Err(Fenced::Store(down()))
        }
    }
    impl Items for Down {
        fn items(&self, _: bool) -> R<Vec<Item>> {
            Err(down())
        }
        fn close_item(&self, _: &str, _: &str, _: Instant) -> R<bool> {
            Err(down())
        }
    }
    impl Operate for Down {
        fn list(&self, _: &ListFilter) -> R<Vec<DeliveryRow>> {
            Err(down())
        }
        fn ids_starting(&self, _: &str, _: usize) -> R<Vec<String>> {
            Err(down())
        }
        fn retry(&self, _: &str, _: bool, _: &str, _: Instant) -> R<Operated> {
            Err(down())
        }
        fn abandon(
            &self,
            _: &str,
            _: &str,
            _: &str,
            _: Option<&StoredResponse>,
            _: Instant,
        ) -> R<Operated> {
            Err(down())
        }
        fn unfinished(&self) -> R<Vec<(String, StoredRecord)>> {
            Err(down())
        }
        fn prune(&self, _: Instant, _: Retention, _: usize) -> R<Pruned> {
            Err(down())
        }
        fn forget(&self, _: &str) -> R<Operated> {
            Err(down())
        }
    }
    impl Store for Down {
        fn name(&self) -> &str {
            "ledger"
        }
    }
}

/// A record store that cannot be reached: the claim runs nothing, leaves
/// the home row retryable a second later without counting the attempt,
/// and the other store's deliveries are still claimed.
#[test]
fn a_record_store_down_at_the_claim_leaves_the_row_to_run_later() {
    let primary: Arc<dyn Store> = Arc::new(jadpo_runtime::store::MemStore::named("primary"));
    let placement = Placement {
        records: [("charge".to_string(), "ledger".to_string())].into(),
        entities: Default::default(),
        default: "primary".into(),
    };
    let several = Several::new(vec![primary.clone(), Arc::new(Down)], &placement);
    emitted(&*primary, "d1");
    let before = now();
    assert!(claim_at(&several, now(), 60_000).is_empty());
    let row = primary.delivery("d1").unwrap().expect("the row");
    assert_eq!(row.state, DeliveryState::Retryable);
    assert_eq!(row.attempt, 0, "the attempt was counted");
    assert!(row.run_at.0 >= later(before, 1_000).0, "{:?}", row.run_at);
    assert!(row.reason.unwrap_or_default().contains("down"));
    // Maintenance says a store did not answer, after the others' turn.
    let keep = jadpo_runtime::store::Retention::default();
    assert!(several.prune(now(), keep, 10).is_err());
}

/// The gauges of unfinished records count each store by its own name.
#[test]
fn unfinished_records_are_counted_by_store() {
    for kind in kinds() {
        let label = format!("several gauges on {}", kind.label());
        let (primary, _ledger, several) = stores(&kind, "several_gauges");
        emitted(&*primary, "d1");
        let c = claim_at(&several, now(), 60_000).pop().expect("claimed");
        several
            .put_step("d1", &c.lease, &record(), &step(1, false))
            .unwrap();
        let mut counted: Vec<(String, usize)> = several
            .unfinished_by_store()
            .into_iter()
            .map(|(store, held)| (store, held.unwrap().len()))
            .collect();
        counted.sort();
        let expected = vec![("ledger".to_string(), 1), ("primary".to_string(), 0)];
        assert_eq!(counted, expected, "{label}");
    }
}

/// `primary` in memory and a store that is down, every action's record in
/// `primary`; the store down first when `down_first`.
fn primary_and_down(down_first: bool) -> (Arc<dyn Store>, Several) {
    let primary: Arc<dyn Store> = Arc::new(jadpo_runtime::store::MemStore::named("primary"));
    let placement = Placement {
        records: Default::default(),
        entities: Default::default(),
        default: "primary".into(),
    };
    let mut stores: Vec<Arc<dyn Store>> = vec![primary.clone(), Arc::new(Down)];
    if down_first {
        stores.reverse();
    }
    (primary, Several::new(stores, &placement))
}

/// A store down while another answers: the claim runs the other's
/// deliveries and gives the error once to the dispatcher, which says it;
/// the gauges are not read from what answered (an outage is no reason to
/// end the alert).
#[test]
fn a_store_down_is_said_by_the_claim_and_keeps_the_gauges() {
    let (primary, several) = primary_and_down(false);
    emitted(&*primary, "d1");
    assert_eq!(claim_at(&several, now(), 60_000).len(), 1);
    let errors = several.claim_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_string().contains("ledger"), "{errors:?}");
    assert!(
        several.claim_errors().is_empty(),
        "each error is given once"
    );

    let read = jadpo_server::engine::gauges::read(&several, now());
    let Err(errors) = read else {
        panic!("the gauges were read from one store of two");
    };
    // Its unfinished records and the operator items both went unread.
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].to_string().contains("ledger"), "{errors:?}");
    let alone = jadpo_server::engine::gauges::read(&*primary, now()).expect("read");
    assert_eq!(alone.stores, vec![("primary".to_string(), 0, 0.0)]);
}

/// A store down does not stop the deliveries of the others: a row is
/// found where it is whatever store comes first, and the handled marker
/// of the store that has it settles it; a row found nowhere, with a store
/// that could not be asked, is an error, not "no such delivery".
#[test]
fn a_store_down_leaves_the_others_deliveries_reachable() {
    // The store down comes first, as `ledger` sorts before `primary`.
    let (primary, several) = primary_and_down(true);
    emitted(&*primary, "d1");
    assert!(several.delivery("d1").unwrap().is_some());
    let lease = several.take("d1", 60_000, now()).unwrap().expect("taken");
    assert!(
        several.handled("d1").is_err(),
        "not handled where it is, and the other cannot say"
    );
    several
        .commit(&commit_of("d1", Vec::new()), &lease)
        .unwrap();
    assert!(several.handled("d1").unwrap());
    assert!(several.delivery("d2").is_err());
}
