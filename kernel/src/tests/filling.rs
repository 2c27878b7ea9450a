//! `fill`'s documented invariants (see its doc comment).

use super::{at_most, close, network, random_network, Draw, AMOUNTS};
use crate::filling::{fill, Filled};
use crate::net::Net;

/// Each pool's usage summed again from the allocation.
fn usage(net: &Net, allocation: &[f64]) -> Vec<f64> {
    let mut used = vec![0.0; net.pools()];
    for (i, &a) in allocation.iter().enumerate() {
        for k in net.lane_start[i]..net.lane_start[i + 1] {
            used[net.lane_pool[k]] += a * net.lane_cost[k];
        }
    }
    used
}

fn pools_of(net: &Net, i: usize) -> impl Iterator<Item = usize> + '_ {
    (net.lane_start[i]..net.lane_start[i + 1]).map(|k| net.lane_pool[k])
}

/// Every invariant of one filling's result.
pub fn check_filling(net: &Net, caps: &[f64], capacity: &[f64], got: &Filled) {
    let n = net.lanes();
    assert_eq!(got.allocation.len(), n);
    assert_eq!(got.saturated.len(), net.pools());
    assert_eq!(got.used.len(), net.pools());
    for i in 0..n {
        let a = got.allocation[i];
        assert!(
            a >= 0.0 && a <= caps[i],
            "lane {i}: {a} not in [0, {}]",
            caps[i]
        );
    }
    let again = usage(net, &got.allocation);
    for p in 0..net.pools() {
        assert!(
            close(got.used[p], again[p], 0.0),
            "pool {p}: usage {} vs {}",
            got.used[p],
            again[p]
        );
        assert!(
            at_most(got.used[p], capacity[p]),
            "pool {p} over its capacity"
        );
        if got.saturated[p] {
            assert!(
                close(got.used[p], capacity[p], 0.0),
                "saturated pool {p} not full"
            );
        }
    }
    let level = |j: usize| got.allocation[j] / net.weights[j];
    for i in 0..n {
        if close(got.allocation[i], caps[i], 0.0) {
            continue;
        }
        // Below its cap: work-conserving (a saturated pool holds it back) and max-min fair (in
        // one of those, its bottleneck, no lane stands at a higher level).
        let bottleneck = pools_of(net, i).filter(|&p| got.saturated[p]).find(|&p| {
            (net.pool_start[p]..net.pool_start[p + 1])
                .all(|k| at_most(level(net.pool_lane[k]), level(i)))
        });
        assert!(
            bottleneck.is_some(),
            "lane {i} below its cap has no bottleneck pool"
        );
    }
}

#[test]
fn one_pool_shares_by_weight() {
    let net = network(&[(1.0, 5.0, vec![(0, 1.0)]), (3.0, 5.0, vec![(0, 1.0)])], 1);
    let got = fill(&net, &[10.0, 10.0], &[8.0]).unwrap();
    assert_eq!(got.allocation, vec![2.0, 6.0]);
    assert_eq!(got.saturated, vec![true]);
    assert_eq!(got.used, vec![8.0]);
}

#[test]
fn a_capped_lane_leaves_the_rest_to_the_others() {
    let net = network(&[(1.0, 5.0, vec![(0, 1.0)]), (1.0, 5.0, vec![(0, 1.0)])], 1);
    let got = fill(&net, &[1.0, f64::INFINITY], &[10.0]).unwrap();
    assert_eq!(got.allocation, vec![1.0, 9.0]);
    let got = fill(&net, &[f64::INFINITY, f64::INFINITY], &[10.0]).unwrap();
    assert_eq!(
        (got.allocation, got.saturated),
        (vec![5.0, 5.0], vec![true])
    );
}

#[test]
fn empty_networks() {
    let got = fill(&network(&[], 0), &[], &[]).unwrap();
    assert!(got.allocation.is_empty() && got.saturated.is_empty() && got.used.is_empty());
    let got = fill(&network(&[], 3), &[], &[1.0, 0.0, 2.0]).unwrap();
    assert_eq!((got.saturated, got.used), (vec![false; 3], vec![0.0; 3]));
    // A lane in no pool is filled to its cap (+inf stays +inf).
    let net = network(&[(1.0, 1.0, vec![]), (2.0, 1.0, vec![])], 0);
    assert_eq!(
        fill(&net, &[4.0, f64::INFINITY], &[]).unwrap().allocation,
        vec![4.0, f64::INFINITY]
    );
}

#[test]
fn zero_capacity_and_zero_caps_give_nothing() {
    let net = network(
        &[
            (1.0, 5.0, vec![(0, 1.0), (1, 2.0)]),
            (2.0, 5.0, vec![(1, 1.0)]),
        ],
        2,
    );
    let got = fill(&net, &[3.0, 3.0], &[0.0, 10.0]).unwrap();
    assert_eq!(got.allocation, vec![0.0, 3.0]);
    assert!(got.saturated[0]);
    let got = fill(&net, &[0.0, 0.0], &[10.0, 10.0]).unwrap();
    assert_eq!((got.allocation, got.used), (vec![0.0, 0.0], vec![0.0, 0.0]));
}

#[test]
fn extreme_weights_side_by_side() {
    let lanes = [
        (1e-30, f64::INFINITY, vec![(0, 1.0)]),
        (1e30, f64::INFINITY, vec![(0, 1.0)]),
    ];
    let net = network(&lanes, 1);
    let caps = [f64::INFINITY, f64::INFINITY];
    let got = fill(&net, &caps, &[1.0]).unwrap();
    check_filling(&net, &caps, &[1.0], &got);
    assert!(
        got.allocation[0] > 0.0,
        "the light lane still gets its share"
    );
    let got = fill(&net, &caps, &[1e60]).unwrap();
    check_filling(&net, &caps, &[1e60], &got);
}

#[test]
fn huge_limits_and_capacities() {
    let lanes = [
        (1.0, 1e12, vec![(0, 1e-30)]),
        (1.0, 1e60, vec![(0, 1e30), (1, 1.0)]),
    ];
    let net = network(&lanes, 2);
    for capacity in [[1e12, 1e18], [1e60, 1e60], [0.0, 1e60]] {
        let caps = [1e12, 1e60];
        let got = fill(&net, &caps, &capacity).unwrap();
        check_filling(&net, &caps, &capacity, &got);
    }
}

#[test]
fn a_lane_in_many_pools_is_held_by_the_tightest() {
    let pools = 64;
    let draws: Vec<(usize, f64)> = (0..pools).map(|p| (p, 1.0 + p as f64)).collect();
    let mut lanes = vec![(1.0, f64::INFINITY, draws)];
    lanes.extend((0..pools).map(|p| (2.0, f64::INFINITY, vec![(p, 1.0)])));
    let net = network(&lanes, pools);
    let caps = vec![f64::INFINITY; net.lanes()];
    let capacity: Vec<f64> = (0..pools).map(|p| 100.0 + p as f64).collect();
    let got = fill(&net, &caps, &capacity).unwrap();
    check_filling(&net, &caps, &capacity, &got);
    assert!(got.saturated.iter().all(|&s| s));
}

#[test]
fn random_networks_keep_every_invariant() {
    let mut draw = Draw(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let net = random_network(&mut draw, 8, 5);
        let caps: Vec<f64> = (0..net.lanes())
            .map(|_| {
                if draw.below(5) == 0 {
                    f64::INFINITY
                } else {
                    draw.pick(AMOUNTS)
                }
            })
            .collect();
        let capacity: Vec<f64> = (0..net.pools()).map(|_| draw.pick(AMOUNTS)).collect();
        let got = fill(&net, &caps, &capacity).unwrap();
        check_filling(&net, &caps, &capacity, &got);
    }
}
