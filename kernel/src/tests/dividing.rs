//! `allocate`'s documented invariants (see its doc comment).

use super::filling::check_filling;
use super::{at_most, close, network, random_network, Draw, AMOUNTS};
use crate::dividing::{allocate, Allocated};
use crate::filling::fill;
use crate::net::Net;

/// Every invariant of one tick's results.
fn check_allocated(net: &Net, demands: &[f64], capacity: &[f64], admission: bool, got: &Allocated) {
    let caps: Vec<f64> = demands
        .iter()
        .zip(&net.limits)
        .map(|(&d, &l)| d.min(l))
        .collect();
    assert_eq!(got.caps, caps);
    let filled = fill(net, &caps, capacity).unwrap();
    assert_eq!(
        got.allocation, filled.allocation,
        "the allocation is the caps' filling"
    );
    check_filling(net, &caps, capacity, &filled);
    let mut demand = vec![0.0; net.pools()];
    let mut admitted = vec![0.0; net.pools()];
    for i in 0..net.lanes() {
        let (a, b) = (got.allocation[i], got.admission[i]);
        assert!(
            a <= b && b <= net.limits[i],
            "lane {i}: admission {b} not in [{a}, limit]"
        );
        if !admission {
            assert_eq!(a, b);
        }
        for k in net.lane_start[i]..net.lane_start[i + 1] {
            demand[net.lane_pool[k]] += caps[i] * net.lane_cost[k];
            admitted[net.lane_pool[k]] += b * net.lane_cost[k];
        }
    }
    for p in 0..net.pools() {
        assert!(
            close(got.pool_demand[p], demand[p], 0.0),
            "pool {p}'s demand"
        );
        if admitted[p].is_finite() {
            assert!(
                at_most(admitted[p], capacity[p]),
                "pool {p} admits over its capacity"
            );
        }
    }
}

#[test]
fn admission_fills_active_lanes_then_idle_ones() {
    let lanes = [
        (1.0, 10.0, vec![(0, 1.0)]),
        (1.0, 10.0, vec![(0, 1.0)]),
        (1.0, 10.0, vec![(0, 1.0)]),
    ];
    let net = network(&lanes, 1);
    // Active lanes take what is left up to their limits before the idle one gets any.
    let got = allocate(&net, &[2.0, 3.0, 0.0], &[18.0], true).unwrap();
    assert_eq!(got.allocation, vec![2.0, 3.0, 0.0]);
    assert_eq!(got.admission, vec![8.5, 9.5, 0.0]); // rooms 8 and 7 share the 13 left
    let got = allocate(&net, &[2.0, 3.0, 0.0], &[24.0], true).unwrap();
    assert_eq!(got.admission, vec![10.0, 10.0, 4.0]);
    let got = allocate(&net, &[2.0, 3.0, 0.0], &[24.0], false).unwrap();
    assert_eq!(got.admission, got.allocation);
    assert_eq!(got.pool_demand, vec![5.0]);
}

#[test]
fn caps_are_demand_within_limit() {
    let net = network(
        &[
            (2.0, 5.0, vec![(0, 2.0)]),
            (2.0, f64::INFINITY, vec![(0, 1.0)]),
        ],
        1,
    );
    let got = allocate(&net, &[3.0, 4.0], &[10.0], true).unwrap();
    assert_eq!(got.caps, vec![3.0, 4.0]);
    assert_eq!(got.pool_demand, vec![10.0]);
    let got = allocate(&net, &[1e60, 0.0], &[10.0], true).unwrap();
    assert_eq!(got.caps, vec![5.0, 0.0]);
    check_allocated(&net, &[1e60, 0.0], &[10.0], true, &got);
}

#[test]
fn empty_and_poolless_networks() {
    let got = allocate(&network(&[], 0), &[], &[], true).unwrap();
    assert!(got.caps.is_empty() && got.admission.is_empty() && got.pool_demand.is_empty());
    let net = network(&[(1.0, 1.0, vec![])], 0);
    let got = allocate(&net, &[4.0], &[], true).unwrap();
    assert_eq!(
        (got.caps, got.allocation, got.admission),
        (vec![1.0], vec![1.0], vec![1.0])
    );
}

#[test]
fn zero_capacity_admits_nothing() {
    let net = network(
        &[(1.0, 1e12, vec![(0, 1.0)]), (1e30, 1e60, vec![(0, 1e-30)])],
        1,
    );
    let got = allocate(&net, &[0.0, 5.0], &[0.0], true).unwrap();
    assert_eq!(
        (got.allocation, got.admission),
        (vec![0.0, 0.0], vec![0.0, 0.0])
    );
}

#[test]
fn random_networks_keep_every_invariant() {
    let mut draw = Draw(0xD1B5_4A32_D192_ED03);
    for case in 0..3000 {
        let net = random_network(&mut draw, 8, 5);
        let demands: Vec<f64> = (0..net.lanes()).map(|_| draw.pick(AMOUNTS)).collect();
        let capacity: Vec<f64> = (0..net.pools()).map(|_| draw.pick(AMOUNTS)).collect();
        let admission = case % 3 != 0;
        let got = allocate(&net, &demands, &capacity, admission).unwrap();
        check_allocated(&net, &demands, &capacity, admission, &got);
    }
}
