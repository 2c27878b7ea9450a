//! `desired`'s documented invariants (see `sizing.rs`).

use super::Draw;
use crate::net::MAX_COUNT;
use crate::sizing::{desired, PoolSizing};

fn pool(grow: f64, static_capacity: f64, targets: &[(f64, i64, i64)]) -> PoolSizing {
    PoolSizing {
        grow,
        static_capacity,
        units_per_replica: targets.iter().map(|t| t.0).collect(),
        lows: targets.iter().map(|t| t.1).collect(),
        highs: targets.iter().map(|t| t.2).collect(),
    }
}

/// Within [min, max]; enough units for `demand x grow - static` when the maxima reach it, else
/// every target at its max.
fn check_desired(p: &PoolSizing, demand: f64, counts: &[i64]) {
    assert_eq!(counts.len(), p.units_per_replica.len());
    let needed = demand * p.grow - p.static_capacity;
    let (mut supplied, mut reach) = (0.0, 0.0);
    for (k, &c) in counts.iter().enumerate() {
        assert!(
            p.lows[k] <= c && c <= p.highs[k],
            "target {k}: {c} out of its bounds"
        );
        supplied += c as f64 * p.units_per_replica[k];
        reach += p.highs[k] as f64 * p.units_per_replica[k];
    }
    let tolerance = 1e-6 * needed.abs().max(1.0);
    if reach >= needed + tolerance {
        assert!(
            supplied >= needed - tolerance,
            "{supplied} units for {needed}"
        );
    } else if needed > reach + tolerance {
        assert_eq!(counts, p.highs, "an unreachable need takes every max");
    }
}

#[test]
fn covers_the_need_with_headroom_and_static_capacity() {
    let p = pool(1.25, 0.0, &[(2.0, 0, 100)]);
    assert_eq!(desired(&p, 8.0), vec![5]); // 10 units: 5 replicas of 2
    let p = pool(1.0, 4.0, &[(2.0, 0, 100)]);
    assert_eq!(desired(&p, 8.0), vec![2]); // static capacity covers 4 of 8
    assert_eq!(desired(&p, 3.0), vec![0]);
}

#[test]
fn bounds_hold() {
    let p = pool(1.0, 0.0, &[(1.0, 3, 5)]);
    assert_eq!(desired(&p, 0.0), vec![3]);
    assert_eq!(desired(&p, 4.0), vec![4]);
    assert_eq!(desired(&p, 1e60), vec![5]);
    assert!(desired(&pool(1.0, 0.0, &[]), 5.0).is_empty());
}

#[test]
fn shares_follow_each_targets_reach() {
    let p = pool(1.0, 0.0, &[(1.0, 0, 10), (1.0, 0, 30)]);
    assert_eq!(desired(&p, 20.0), vec![5, 15]);
    check_desired(&p, 21.0, &desired(&p, 21.0));
}

#[test]
fn huge_counts_and_factors() {
    let p = pool(
        1e6,
        0.0,
        &[(1e30, 0, MAX_COUNT), (1e-30, MAX_COUNT, MAX_COUNT)],
    );
    for demand in [0.0, 1.0, 1e30, 1e60] {
        check_desired(&p, demand, &desired(&p, demand));
    }
    let p = pool(1.0, 1e60, &[(1e-30, 0, MAX_COUNT)]);
    assert_eq!(desired(&p, 1e60), vec![0]);
}

#[test]
fn random_pools_keep_every_invariant() {
    let mut draw = Draw(0x2545_F491_4F6C_DD1D);
    let units = [1e-30, 0.5, 1.0, 3.0, 1e6, 1e30];
    let counts = [0, 1, 2, 5, 100, MAX_COUNT];
    let amounts = [0.0, 0.5, 1.0, 7.0, 1e3, 1e12, 1e60];
    for _ in 0..5000 {
        let targets: Vec<(f64, i64, i64)> = (0..draw.below(5))
            .map(|_| {
                let (a, b) = (
                    counts[draw.below(counts.len())],
                    counts[draw.below(counts.len())],
                );
                (draw.pick(&units), a.min(b), a.max(b))
            })
            .collect();
        let p = pool(
            draw.pick(&[1.0, 1.1, 2.0, 1e6]),
            draw.pick(&amounts),
            &targets,
        );
        let demand = draw.pick(&amounts);
        check_desired(&p, demand, &desired(&p, demand));
    }
}
