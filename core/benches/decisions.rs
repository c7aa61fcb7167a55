//! How long one decision takes.
//!
//! `cargo bench -p lease-machines --bench decisions -- --warm-up-time 1 --measurement-time 2`
//!
//! Decisions that change the state (a grant, a release) run on a fresh copy of
//! a prepared authority each iteration, so the figure includes copying it (a
//! few dozen bytes). Decisions that can repeat (a refusal, a renewal at the
//! same instant, a fence check) run in place.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use lease_machines::{Checkpoint, Fence, FencingToken, Lease, LeaseAuthority, OwnerId, TokenFloor};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Owner 7 holds token 41 until 100 s; the clock has seen 50 s.
fn held() -> LeaseAuthority {
    let token = FencingToken::new(41).unwrap();
    let lease = Lease::new(OwnerId::new(7), token, secs(100));
    LeaseAuthority::restore(Checkpoint::from_parts(Some(token), Some(lease), secs(50)).unwrap())
}

fn authority(c: &mut Criterion) {
    let mut group = c.benchmark_group("authority");
    let (seven, twelve) = (OwnerId::new(7), OwnerId::new(12));
    let token = FencingToken::new(41).unwrap();

    // The lease lapsed at 100 s; owner 12 gets token 42.
    let prepared = held();
    group.bench_function("acquire_granted", |b| {
        b.iter(|| {
            let mut a = black_box(prepared);
            a.acquire(black_box(twelve), black_box(secs(120)), black_box(secs(30)))
        })
    });

    // The same grant with the token floor: owner 12 gets 120_000_000 (the
    // clock in µs) instead of 42.
    let floored = held().with_token_floor(TokenFloor::ClockMicros);
    group.bench_function("acquire_granted_clock_floor", |b| {
        b.iter(|| {
            let mut a = black_box(floored);
            a.acquire(black_box(twelve), black_box(secs(120)), black_box(secs(30)))
        })
    });

    let mut a = held();
    group.bench_function("acquire_rejected_occupied", |b| {
        b.iter(|| a.acquire(black_box(twelve), black_box(secs(60)), black_box(secs(30))))
    });

    let mut a = held();
    group.bench_function("acquire_rejected_clock_regressed", |b| {
        b.iter(|| a.acquire(black_box(twelve), black_box(secs(40)), black_box(secs(30))))
    });

    let mut a = held();
    group.bench_function("renew_renewed", |b| {
        b.iter(|| {
            a.renew(
                black_box(seven),
                black_box(token),
                black_box(secs(60)),
                black_box(secs(30)),
            )
        })
    });

    let mut a = held();
    let stale = FencingToken::new(40).unwrap();
    group.bench_function("renew_rejected_stale_token", |b| {
        b.iter(|| {
            a.renew(
                black_box(seven),
                black_box(stale),
                black_box(secs(60)),
                black_box(secs(30)),
            )
        })
    });

    let prepared = held();
    group.bench_function("release_released", |b| {
        b.iter(|| {
            let mut a = black_box(prepared);
            a.release(black_box(seven), black_box(token), black_box(secs(60)))
        })
    });
    group.finish();
}

fn fence(c: &mut Criterion) {
    let mut group = c.benchmark_group("fence");
    let mark = FencingToken::new(41).unwrap();
    let lower = FencingToken::new(40).unwrap();

    let mut fence = Fence::new(Some(mark));
    group.bench_function("accept_equal", |b| b.iter(|| fence.accept(black_box(mark))));

    let mut fence = Fence::new(Some(mark));
    group.bench_function("accept_lower_refused", |b| {
        b.iter(|| fence.accept(black_box(lower)))
    });
    group.finish();
}

criterion_group!(benches, authority, fence);
criterion_main!(benches);
