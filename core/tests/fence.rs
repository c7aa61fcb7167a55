//! The fence at the protected resource (SPEC 2.3).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use lease_machines::{Decision, Fence, FencingToken, LeaseAuthority, OwnerId};

fn token(n: u64) -> FencingToken {
    FencingToken::new(n).unwrap()
}

#[test]
fn an_empty_fence_accepts_any_token_and_remembers_it() {
    for first in [1, 2, 1000, u64::MAX] {
        let mut fence = Fence::new(None);
        assert_eq!(fence.highest(), None);
        assert!(fence.accept(token(first)));
        assert_eq!(fence.highest(), Some(token(first)));
    }
    assert_eq!(Fence::default(), Fence::new(None));
}

#[test]
fn equal_tokens_pass_and_keep_the_mark() {
    let mut fence = Fence::new(None);
    assert!(fence.accept(token(4)));
    for _ in 0..3 {
        assert!(fence.accept(token(4)));
        assert!(fence.accept(Some(token(4))));
        assert_eq!(fence.highest(), Some(token(4)));
    }
}

#[test]
fn a_lower_token_is_refused_and_changes_nothing() {
    let mut fence = Fence::new(None);
    assert!(fence.accept(token(5)));
    assert!(!fence.accept(token(4)));
    assert!(!fence.accept(token(1)));
    assert_eq!(fence.highest(), Some(token(5)));
    assert!(fence.accept(token(6)));
    assert!(!fence.accept(token(5)));
    assert_eq!(fence.highest(), Some(token(6)));
}

#[test]
fn no_token_is_always_refused() {
    let mut fence = Fence::new(None);
    assert!(!fence.accept(None));
    assert!(!fence.accept(FencingToken::new(0)));
    assert_eq!(fence.highest(), None, "refusing None must not set a mark");
    assert!(fence.accept(token(3)));
    assert!(!fence.accept(None));
    assert_eq!(fence.highest(), Some(token(3)));
}

#[test]
fn a_fence_rebuilt_from_storage_keeps_its_mark() {
    let mut fence = Fence::new(Some(token(5)));
    assert_eq!(fence.highest(), Some(token(5)));
    assert!(!fence.accept(token(4)));
    assert_eq!(fence.highest(), Some(token(5)));
    assert!(fence.accept(token(5)));
    assert!(fence.accept(token(6)));
    assert_eq!(fence.highest(), Some(token(6)));

    let mut top = Fence::new(Some(FencingToken::MAX));
    assert!(top.accept(FencingToken::MAX));
    assert!(!top.accept(token(u64::MAX - 1)));
}

#[test]
fn the_stalled_worker_story() {
    let secs = Duration::from_secs;
    let mut authority = LeaseAuthority::new();
    let mut fence = Fence::new(None);
    let Decision::Granted(old) = authority.acquire(OwnerId::new(1), secs(0), secs(10)) else {
        unreachable!("a fresh authority grants")
    };
    assert!(fence.accept(old.token()));
    // The first worker stalls past its TTL; the second one takes over.
    let Decision::Granted(new) = authority.acquire(OwnerId::new(2), secs(11), secs(10)) else {
        unreachable!("the lease lapsed")
    };
    // Until the new holder writes, the fence cannot know: it still accepts 1.
    assert!(fence.accept(old.token()));
    assert!(fence.accept(new.token()));
    // From then on the stale worker is turned away, the new one is not.
    assert!(!fence.accept(old.token()));
    assert!(fence.accept(new.token()));
}
