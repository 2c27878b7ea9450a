//! Weighted progressive filling (max-min fairness by weight) of a [`Net`]'s lanes up to their
//! caps within each pool's capacity: the algorithm and its numerical care are described in
//! `arklow_pulumi/core/filling.py`; the Python oracle it must equal to the bit is
//! `tests/reference_filling.py`.
//!
//! All levels rise together; a lane freezes when it reaches its cap, and every unfrozen lane of a
//! pool freezes when the pool saturates. The pools wait in a heap by the level at which they
//! saturate (a lower bound, refreshed as lanes freeze); the lanes are sorted once by the level at
//! which they reach their caps. The loops are bounded by the number of events (lane freezes, pool
//! saturations, heap refreshes), and a guard turns a breach of that bound into an error.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::net::Net;

/// A pool's running slope is summed again from its unfrozen members once it falls under this
/// fraction of its value at the last exact sum: the subtractions since then were each rounded
/// to at most half an ulp of that value, so the running value keeps a relative error of at most
/// `k * 2^-53 / RECOMPUTE` after `k` of them, whatever the spread of weight x cost.
const RECOMPUTE: f64 = 1.0 / 16.0;

/// One filling's result: each lane's allocation, which pools saturated, each pool's usage.
pub struct Filled {
    pub allocation: Vec<f64>,
    pub saturated: Vec<bool>,
    pub used: Vec<f64>,
}

/// A heap key: a finite level (never NaN: inputs are checked), ties by pool index.
#[derive(Clone, Copy, PartialEq)]
struct Key(f64, usize);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The state of one filling: per pool, the units its frozen lanes use (`fixed`), the units per
/// unit of level its unfrozen lanes add (`slope`, with `scale` its value at the last exact sum),
/// and its unfrozen members (`live_*`, compacted at each exact sum).
struct Filling<'a> {
    net: &'a Net,
    caps: &'a [f64],
    alloc: Vec<f64>,
    frozen: Vec<bool>,
    fixed: Vec<f64>,
    slope: Vec<f64>,
    scale: Vec<f64>,
    active: Vec<usize>,
    saturated: Vec<bool>,
    live_lane: Vec<usize>,
    live_cost: Vec<f64>,
    live_end: Vec<usize>,
}

impl Filling<'_> {
    /// Sum the pool's slope again over its unfrozen members, in lane order, dropping the
    /// frozen ones from its live list.
    fn resum(&mut self, q: usize) {
        let start = self.net.pool_start[q];
        let mut kept = start;
        let mut sum = 0.0;
        for k in start..self.live_end[q] {
            let j = self.live_lane[k];
            if !self.frozen[j] {
                let c = self.live_cost[k];
                sum += self.net.weights[j] * c;
                self.live_lane[kept] = j;
                self.live_cost[kept] = c;
                kept += 1;
            }
        }
        self.live_end[q] = kept;
        self.slope[q] = sum;
        self.scale[q] = sum;
    }

    fn freeze(&mut self, i: usize, value: f64) {
        self.frozen[i] = true;
        self.alloc[i] = value;
        let w = self.net.weights[i];
        for k in self.net.lane_start[i]..self.net.lane_start[i + 1] {
            let q = self.net.lane_pool[k];
            let c = self.net.lane_cost[k];
            self.fixed[q] += value * c;
            self.active[q] -= 1;
            if self.saturated[q] {
                continue;
            }
            if self.active[q] == 0 {
                self.slope[q] = 0.0;
            } else {
                self.slope[q] -= w * c;
                if self.slope[q] <= self.scale[q] * RECOMPUTE {
                    self.resum(q);
                }
            }
        }
    }

    /// The pool that saturates next, with its up-to-date level; stale heap entries refreshed.
    fn next_pool(&self, heap: &mut BinaryHeap<Reverse<Key>>, capacity: &[f64]) -> Option<Key> {
        while let Some(&Reverse(Key(key, p))) = heap.peek() {
            if self.saturated[p] || self.active[p] == 0 || self.slope[p] <= 0.0 {
                heap.pop();
                continue;
            }
            let current = at_least_zero(capacity[p] - self.fixed[p]) / self.slope[p];
            if current > key {
                heap.pop();
                heap.push(Reverse(Key(current, p)));
                continue;
            }
            return Some(Key(key, p));
        }
        None
    }
}

/// Whether a lane whose cap is reached at `level` freezes before a pool saturating at `bound`.
fn reached(level: f64, bound: f64) -> bool {
    level < bound || (level == bound && bound > 0.0)
}

/// Weighted progressive filling of `caps` within `capacity` (see `core/filling.py`).
///
/// `caps` has one entry per lane (each in [0, +inf]), `capacity` one per pool (each in
/// [0, MAX_AMOUNT]), weights and costs in the domain of `net.rs`. What it returns keeps, with
/// every pool's usage `used[p]` the sum of its lanes' allocation x cost:
///
/// - each lane's allocation is in [0, its cap], and a lane with a cap of 0 gets 0;
/// - each pool's usage is at most its capacity (up to the rounding of the sum);
/// - a saturated pool is full (usage equals capacity, up to rounding), and a lane below its
///   cap draws on at least one saturated pool (work-conserving: no lane could grow);
/// - max-min fairness by weight: lanes below their caps that share a saturated pool, and
///   saturated there first, stand at the same level `allocation / weight`, and no lane below its
///   cap stands above the level of a saturated pool it draws on;
/// - the loops end within a bound of events; an `Err` names a breach of it (a bug).
pub fn fill(net: &Net, caps: &[f64], capacity: &[f64]) -> Result<Filled, &'static str> {
    let n = caps.len();
    let m = capacity.len();
    let mut f = Filling {
        net,
        caps,
        alloc: vec![0.0; n],
        frozen: caps.iter().map(|&cap| cap <= 0.0).collect(), // checked: no NaN
        fixed: vec![0.0; m],
        slope: vec![0.0; m],
        scale: vec![0.0; m],
        active: vec![0; m],
        saturated: vec![false; m],
        live_lane: net.pool_lane.clone(),
        live_cost: net.pool_cost.clone(),
        live_end: net.pool_start[1..].to_vec(),
    };
    if f.frozen.iter().all(|&x| x) {
        return Ok(Filled {
            allocation: f.alloc,
            saturated: f.saturated,
            used: f.fixed,
        });
    }
    let mut heap = BinaryHeap::with_capacity(m);
    for (p, &room) in capacity.iter().enumerate() {
        f.resum(p);
        f.active[p] = f.live_end[p] - net.pool_start[p];
        if f.active[p] > 0 && f.slope[p] > 0.0 {
            heap.push(Reverse(Key(room / f.slope[p], p)));
        }
    }
    let lane_level: Vec<f64> = (0..n).map(|i| caps[i] / net.weights[i]).collect();
    // Lanes by the level at which they reach their caps, ties by index. The levels are finite
    // and >= +0.0 (checked inputs), and such doubles order as their bit patterns do.
    let mut keyed: Vec<(u64, usize)> = (0..n)
        .filter(|&i| !f.frozen[i])
        .map(|i| (lane_level[i].to_bits(), i))
        .collect();
    keyed.sort_unstable();
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    let mut nxt = 0;
    let mut level = 0.0_f64;
    // Each round freezes a lane, saturates a pool or follows a change of a pool's level made
    // by lanes frozen in it; each refresh follows a freeze. Anything beyond is a bug.
    let mut budget = 2 * (n + m + net.lane_pool.len()) + 8;
    loop {
        if budget == 0 {
            return Err("the filling did not finish within its bound of events");
        }
        budget -= 1;
        let pool = f.next_pool(&mut heap, capacity);
        let bound = pool.map_or(f64::INFINITY, |Key(key, _)| key);
        // Lane events up to the next pool's (lower-bound) level: a pool's level only rises as
        // lanes freeze, so none of these can be pre-empted by a pool saturating first. At level
        // 0 the pool goes first: a cap so small that cap / weight is 0 must not fill a full pool.
        while nxt < order.len() && reached(lane_level[order[nxt]], bound) {
            let i = order[nxt];
            if !f.frozen[i] {
                f.freeze(i, f.caps[i]);
            }
            nxt += 1;
        }
        let Some(Key(pool_level, p)) = pool else {
            break;
        };
        if f.next_pool(&mut heap, capacity) != pool {
            continue; // lanes frozen above moved this pool's level; look again
        }
        heap.pop();
        if pool_level > level {
            level = pool_level;
        }
        f.saturated[p] = true;
        // The saturated pool's live list is no longer compacted (its slope is not kept), so it
        // can be walked while its lanes freeze.
        for k in net.pool_start[p]..f.live_end[p] {
            let j = f.live_lane[k];
            if !f.frozen[j] {
                let mut value = net.weights[j] * level;
                if value > f.caps[j] {
                    value = f.caps[j];
                }
                f.freeze(j, value);
            }
        }
    }
    Ok(Filled {
        allocation: f.alloc,
        saturated: f.saturated,
        used: f.fixed,
    })
}

/// `x`, or 0 when 0 is greater: Python's `max(x, 0.0)`, which the oracle uses.
pub fn at_least_zero(x: f64) -> f64 {
    if 0.0 > x {
        0.0
    } else {
        x
    }
}
