//! Cadence validity and every holder rule of SPEC section 4, for each method
//! in each state.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::time::Duration;

use lease_machines::{Cadence, FencingToken, Holder, HolderState};

const NS: Duration = Duration::from_nanos(1);

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn token(n: u64) -> FencingToken {
    FencingToken::new(n).unwrap()
}

/// ttl 30 s, renew after 10 s, warn 5 s before expiry: warning 25 s after
/// each confirmation.
fn cadence() -> Cadence {
    Cadence::new(secs(30), secs(10), secs(5)).unwrap()
}

const START: u64 = 100;
const ALL_STATES: [HolderState; 5] = [
    HolderState::Confirmed,
    HolderState::Unconfirmed,
    HolderState::AtRisk,
    HolderState::Expired,
    HolderState::Fenced,
];

/// A holder of token 5, last confirmed at 100 s, in the wanted state.
fn holder_in(state: HolderState) -> Holder {
    let mut holder = Holder::new(token(5), secs(START), cadence());
    match state {
        HolderState::Confirmed => {}
        HolderState::Unconfirmed => assert!(holder.refresh(secs(START + 10))),
        HolderState::AtRisk => assert!(holder.refresh(secs(START + 25))),
        HolderState::Expired => assert!(holder.expire()),
        HolderState::Fenced => assert!(holder.fence()),
    }
    assert_eq!(holder.state(), state);
    assert_eq!(holder.token(), token(5));
    assert_eq!(holder.confirmed_at(), secs(START));
    holder
}

fn is_done(state: HolderState) -> bool {
    matches!(state, HolderState::Expired | HolderState::Fenced)
}

// -------------------------------------------------------------------- cadence

#[test]
fn cadence_validity_boundaries() {
    let ok = |ttl, renew, warn| Cadence::new(ttl, renew, warn).is_some();
    // ttl > 0
    assert!(!ok(Duration::ZERO, NS, Duration::ZERO));
    assert!(ok(NS, NS, Duration::ZERO));
    // renew_after > 0
    assert!(!ok(secs(30), Duration::ZERO, secs(5)));
    assert!(ok(secs(30), NS, secs(5)));
    // warn_before < ttl
    assert!(!ok(secs(30), NS, secs(30)));
    assert!(!ok(secs(30), NS, secs(31)));
    assert!(!ok(secs(30), NS, Duration::MAX));
    assert!(ok(secs(30), NS, secs(30) - NS));
    // renew_after <= ttl - warn_before
    assert!(ok(secs(30), secs(25), secs(5)));
    assert!(!ok(secs(30), secs(25) + NS, secs(5)));
    assert!(ok(secs(30), secs(30), Duration::ZERO));
    assert!(!ok(secs(30), secs(30) + NS, Duration::ZERO));
    // Extremes.
    assert!(ok(Duration::MAX, Duration::MAX, Duration::ZERO));
    assert!(ok(Duration::MAX, NS, Duration::MAX - NS));
    assert!(!ok(Duration::MAX, secs(1), Duration::MAX - NS));
    assert!(!ok(Duration::MAX, Duration::ZERO, Duration::ZERO));
}

#[test]
fn cadence_accessors() {
    let c = cadence();
    assert_eq!(c.ttl(), secs(30));
    assert_eq!(c.renew_after(), secs(10));
    assert_eq!(c.warn_before(), secs(5));
    assert_eq!(c.warn_after(), secs(25));
}

// --------------------------------------------------------------- new holders

#[test]
fn a_new_holder_is_confirmed_at_its_grant() {
    let holder = Holder::new(token(5), secs(START), cadence());
    assert_eq!(holder.state(), HolderState::Confirmed);
    assert_eq!(holder.token(), token(5));
    assert_eq!(holder.confirmed_at(), secs(START));
    assert_eq!(holder.cadence(), cadence());
}

// -------------------------------------------------------- warning_deadline

#[test]
fn warning_deadline_in_each_state() {
    for state in ALL_STATES {
        let holder = holder_in(state);
        let expected = (!is_done(state)).then_some(secs(START + 25));
        assert_eq!(holder.warning_deadline(), expected, "{state:?}");
    }
}

#[test]
fn warning_deadline_that_does_not_fit_never_arrives() {
    let holder = Holder::new(token(1), Duration::MAX - secs(1), cadence());
    assert_eq!(holder.warning_deadline(), None);
    assert!(!holder.at_risk(Duration::MAX));
    assert!(!holder.renewal_due(Duration::MAX));
    let mut holder = holder;
    assert!(holder.refresh(Duration::MAX));
    assert_eq!(holder.state(), HolderState::Unconfirmed);
}

// ---------------------------------------------------------------- renewal_due

#[test]
fn renewal_due_in_each_state() {
    for state in ALL_STATES {
        let holder = holder_in(state);
        let probes = [
            0,
            START,
            START + 10 - 1,
            START + 10,
            START + 25,
            START + 1000,
        ];
        for at in probes {
            let due = holder.renewal_due(secs(at));
            let expected = match state {
                HolderState::Confirmed => at >= START + 10,
                HolderState::Unconfirmed | HolderState::AtRisk => true,
                HolderState::Expired | HolderState::Fenced => false,
            };
            assert_eq!(due, expected, "{state:?} at {at}");
        }
        assert_eq!(
            holder.renewal_due(secs(START + 10) - NS),
            matches!(state, HolderState::Unconfirmed | HolderState::AtRisk)
        );
    }
}

// -------------------------------------------------------------------- refresh

#[test]
fn refresh_in_each_state() {
    for state in ALL_STATES {
        // Before the warning deadline.
        let mut early = holder_in(state);
        let started = early.refresh(secs(START + 25) - NS);
        assert_eq!(started, !is_done(state), "{state:?}");
        let expected = match state {
            HolderState::Confirmed | HolderState::Unconfirmed => HolderState::Unconfirmed,
            // AtRisk stays AtRisk until confirmed.
            HolderState::AtRisk => HolderState::AtRisk,
            done => done,
        };
        assert_eq!(early.state(), expected, "{state:?} early");

        // At the warning deadline.
        let mut late = holder_in(state);
        assert_eq!(late.refresh(secs(START + 25)), !is_done(state));
        let expected = if is_done(state) {
            state
        } else {
            HolderState::AtRisk
        };
        assert_eq!(late.state(), expected, "{state:?} late");

        // Refreshing never touches the token or the schedule.
        assert_eq!(late.token(), token(5));
        assert_eq!(late.confirmed_at(), secs(START));
    }
}

// -------------------------------------------------------------------- confirm

#[test]
fn confirm_in_each_state() {
    for state in ALL_STATES {
        for (reply, expect_taken) in [(4, false), (5, true), (9, true)] {
            let mut holder = holder_in(state);
            let taken = holder.confirm(token(reply), secs(START + 20));
            let expect_taken = expect_taken && !is_done(state);
            assert_eq!(taken, expect_taken, "{state:?} reply {reply}");
            if expect_taken {
                assert_eq!(holder.state(), HolderState::Confirmed);
                assert_eq!(holder.token(), token(reply));
                assert_eq!(holder.confirmed_at(), secs(START + 20));
                // The schedule restarts at the confirmation.
                assert!(!holder.renewal_due(secs(START + 30) - NS));
                assert!(holder.renewal_due(secs(START + 30)));
                assert_eq!(holder.warning_deadline(), Some(secs(START + 45)));
                assert!(!holder.at_risk(secs(START + 45) - NS));
            } else {
                assert_eq!(holder, holder_in(state), "an ignored reply changes nothing");
            }
        }
    }
}

// -------------------------------------------------------------------- at_risk

#[test]
fn at_risk_in_each_state() {
    for state in ALL_STATES {
        let holder = holder_in(state);
        for at in [0, START, START + 25 - 1] {
            assert_eq!(
                holder.at_risk(secs(at)),
                is_done(state),
                "{state:?} at {at}"
            );
        }
        assert_eq!(holder.at_risk(secs(START + 25) - NS), is_done(state));
        assert!(holder.at_risk(secs(START + 25)), "{state:?}");
        assert!(holder.at_risk(Duration::MAX), "{state:?}");
    }
}

// --------------------------------------------------------------------- expire

#[test]
fn expire_in_each_state() {
    for state in ALL_STATES {
        let mut holder = holder_in(state);
        let changed = holder.expire();
        assert_eq!(changed, !is_done(state), "{state:?}");
        let expected = if state == HolderState::Fenced {
            HolderState::Fenced
        } else {
            HolderState::Expired
        };
        assert_eq!(holder.state(), expected);
        assert!(!holder.expire(), "a second expire changes nothing");
        assert_eq!(holder.token(), token(5));
    }
}

// ------------------------------------------------------------------ reacquire

#[test]
fn reacquire_in_each_state() {
    for state in ALL_STATES {
        for (grant, newer) in [(4, false), (5, false), (6, true)] {
            let mut holder = holder_in(state);
            let recovered = holder.reacquire(token(grant), secs(START + 50));
            let expected = newer && state != HolderState::Fenced;
            assert_eq!(recovered, expected, "{state:?} grant {grant}");
            if expected {
                assert_eq!(holder.state(), HolderState::Confirmed);
                assert_eq!(holder.token(), token(grant));
                assert_eq!(holder.confirmed_at(), secs(START + 50));
                assert_eq!(holder.warning_deadline(), Some(secs(START + 75)));
                assert!(holder.renewal_due(secs(START + 60)));
                assert!(!holder.renewal_due(secs(START + 60) - NS));
            } else {
                assert_eq!(holder, holder_in(state), "a refused grant changes nothing");
            }
        }
    }
}

// ---------------------------------------------------------------------- fence

#[test]
fn fence_in_each_state_is_terminal_and_idempotent() {
    for state in ALL_STATES {
        let mut holder = holder_in(state);
        assert_eq!(holder.fence(), state != HolderState::Fenced, "{state:?}");
        assert_eq!(holder.state(), HolderState::Fenced);
        assert!(!holder.fence());

        // Nothing leaves Fenced.
        assert!(!holder.refresh(secs(START + 1)));
        assert!(!holder.confirm(token(9), secs(START + 1)));
        assert!(!holder.expire());
        assert!(!holder.reacquire(token(9), secs(START + 1)));
        assert!(!holder.renewal_due(Duration::MAX));
        assert!(holder.at_risk(Duration::ZERO));
        assert_eq!(holder.warning_deadline(), None);
        assert_eq!(holder.state(), HolderState::Fenced);
        assert_eq!(holder.token(), token(5));
    }
}

// ------------------------------------------------------------- whole stories

#[test]
fn the_worked_example_of_the_ruby_api() {
    let mut holder = Holder::new(token(1), secs(0), cadence());
    assert!(!holder.renewal_due(secs(9)));
    assert!(holder.renewal_due(secs(10)));
    assert!(holder.refresh(secs(10)));
    assert_eq!(holder.state(), HolderState::Unconfirmed);
    assert!(holder.confirm(token(1), secs(11)));
    assert_eq!(holder.state(), HolderState::Confirmed);
    assert!(holder.at_risk(secs(36)));
    assert!(holder.expire());
    assert!(holder.reacquire(token(2), secs(40)));
    assert_eq!(holder.state(), HolderState::Confirmed);
    assert!(holder.fence());
    assert_eq!(holder.warning_deadline(), None);
}

#[test]
fn a_failed_attempt_retries_and_drifts_into_at_risk() {
    let mut holder = Holder::new(token(3), secs(0), cadence());
    assert!(holder.refresh(secs(10)));
    // The attempt got no answer; the next poll retries.
    assert!(holder.renewal_due(secs(12)));
    assert!(holder.refresh(secs(12)));
    assert_eq!(holder.state(), HolderState::Unconfirmed);
    assert!(holder.refresh(secs(25)));
    assert_eq!(holder.state(), HolderState::AtRisk);
    // A stale reply for an older token is ignored; the current one recovers.
    assert!(!holder.confirm(token(2), secs(26)));
    assert_eq!(holder.state(), HolderState::AtRisk);
    assert!(holder.confirm(token(3), secs(26)));
    assert_eq!(holder.state(), HolderState::Confirmed);
    assert!(!holder.at_risk(secs(50)));
    assert!(holder.at_risk(secs(51)));
}

// ------------------------------------------------------------------ max hold

#[test]
fn max_hold_is_at_least_the_ttl() {
    assert_eq!(cadence().max_hold(), None);
    assert_eq!(cadence().with_max_hold(secs(29)), None);
    assert_eq!(
        cadence().with_max_hold(secs(30)).unwrap().max_hold(),
        Some(secs(30))
    );
    let long = cadence().with_max_hold(Duration::MAX).unwrap();
    // The end does not fit in a Duration: it never arrives.
    let holder = Holder::new(token(1), secs(START), long);
    assert_eq!(holder.renewals_end(), None);
    assert!(holder.renewal_allowed(Duration::MAX));
}

#[test]
fn renewals_end_max_hold_after_the_grant_and_the_lease_runs_out_unrenewed() {
    let capped = cadence().with_max_hold(secs(45)).unwrap();
    let mut holder = Holder::new(token(5), secs(START), capped);
    assert_eq!(holder.renewals_end(), Some(secs(START + 45)));
    // Renewals before the end go on as without a maximum hold.
    for at in [START + 10, START + 20, START + 30, START + 40] {
        assert!(holder.renewal_due(secs(at)));
        assert!(holder.refresh(secs(at)));
        assert!(holder.confirm(token(5), secs(at)));
    }
    // Renewals are counted from the grant, not from the last confirmation.
    assert_eq!(holder.renewals_end(), Some(secs(START + 45)));
    assert!(holder.renewal_allowed(secs(START + 45) - NS));
    assert!(!holder.renewal_allowed(secs(START + 45)));
    assert!(!holder.renewal_due(secs(START + 50)));
    assert!(!holder.refresh(secs(START + 50)));
    // Refusing changed nothing: the lease lasts its TTL from the last confirmation.
    assert_eq!(holder.state(), HolderState::Confirmed);
    assert_eq!(holder.confirmed_at(), secs(START + 40));
    assert!(holder.at_risk(secs(START + 65)));
    assert!(holder.expire());
    assert!(!holder.renewal_allowed(secs(START)));
}

#[test]
fn an_outstanding_attempt_is_not_retried_past_the_end() {
    let capped = cadence().with_max_hold(secs(30)).unwrap();
    let mut holder = Holder::new(token(5), secs(0), capped);
    assert!(holder.refresh(secs(25)));
    assert_eq!(holder.state(), HolderState::AtRisk);
    assert!(!holder.renewal_due(secs(30)));
    assert!(!holder.refresh(secs(30)));
    assert_eq!(holder.state(), HolderState::AtRisk);
    // A reply to the attempt sent in time is still taken.
    assert!(holder.confirm(token(5), secs(25)));
    assert_eq!(holder.state(), HolderState::Confirmed);
}

#[test]
fn a_reacquired_holder_keeps_the_end_of_its_first_grant() {
    let capped = cadence().with_max_hold(secs(60)).unwrap();
    let mut holder = Holder::new(token(5), secs(0), capped);
    assert!(holder.expire());
    assert!(holder.reacquire(token(6), secs(40)));
    assert_eq!(holder.renewals_end(), Some(secs(60)));
}
