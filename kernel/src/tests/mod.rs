//! Unit tests of the pure algorithm: the documented invariants of `fill`, `allocate` and
//! `desired` on hand-made networks, on the hostile cases of the Python tests
//! (`tests/core/test_kernel*.py`, `tests/core/test_allocation_properties.py`) and on networks
//! drawn by a small deterministic generator. The bit-for-bit agreement with the Python oracles is
//! checked on the Python side.
// The checks walk lanes and pools by index, as the invariants are written.
#![allow(clippy::needless_range_loop)]

mod dividing;
mod filling;
mod sizing;

use crate::net::Net;

/// A lane as the tests write it: `(weight, limit, [(pool, cost), ...])`.
type Lane = (f64, f64, Vec<(usize, f64)>);

/// Relative tolerance of the invariants' float comparisons (sums rounded in another order).
const TOL: f64 = 1e-9;

/// `a <= b`, up to rounding relative to the larger of the two.
fn at_most(a: f64, b: f64) -> bool {
    a <= b || a - b <= TOL * a.abs().max(b.abs())
}

/// `a == b`, up to rounding relative to the larger of the two (and of `scale`).
fn close(a: f64, b: f64, scale: f64) -> bool {
    a == b || (a - b).abs() <= TOL * a.abs().max(b.abs()).max(scale)
}

/// A network from each lane's `(weight, limit, [(pool, cost), ...])`.
fn network(lanes: &[Lane], pools: usize) -> Net {
    let mut lane_start = vec![0];
    let (mut lane_pool, mut lane_cost) = (Vec::new(), Vec::new());
    for (_, _, draws) in lanes {
        for &(p, c) in draws {
            lane_pool.push(p);
            lane_cost.push(c);
        }
        lane_start.push(lane_pool.len());
    }
    let weights = lanes.iter().map(|l| l.0).collect();
    let limits = lanes.iter().map(|l| l.1).collect();
    Net::new(weights, limits, lane_start, lane_pool, lane_cost, pools).unwrap()
}

/// A small deterministic generator (xorshift64*): the same cases on every run.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A whole number in [0, n).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One of `values`.
    fn pick(&mut self, values: &[f64]) -> f64 {
        values[self.below(values.len())]
    }
}

/// Factors (weights, costs) from the documented range and the kernel's domain's ends.
const FACTORS: &[f64] = &[1e-30, 1e-6, 0.25, 1.0, 1.5, 3.0, 1e6, 1e30];
/// Amounts (demands, capacities, limits) with zeros, huge values and no limit.
const AMOUNTS: &[f64] = &[0.0, 1e-9, 0.5, 1.0, 2.0, 7.0, 100.0, 1e12, 1e18, 1e60];

/// A random network of up to `lanes` lanes and `pools` pools (lanes in up to all pools, some in
/// none), with its lanes' limits drawn from `AMOUNTS` and +inf.
fn random_network(draw: &mut Draw, lanes: usize, pools: usize) -> Net {
    let m = draw.below(pools + 1);
    let n = draw.below(lanes + 1);
    let rows: Vec<Lane> = (0..n)
        .map(|_| {
            let weight = draw.pick(FACTORS);
            let limit = if draw.below(4) == 0 {
                f64::INFINITY
            } else {
                draw.pick(AMOUNTS)
            };
            let mut draws = Vec::new();
            if m > 0 {
                for p in 0..m {
                    if draw.below(3) == 0 {
                        draws.push((p, draw.pick(FACTORS)));
                    }
                }
            }
            (weight, limit, draws)
        })
        .collect();
    network(&rows, m)
}
