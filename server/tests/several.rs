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
