//! A topology's lanes and pools as index arrays, and the domain every number handed to the
//! kernel is checked against (at the Python edge, before any work).

use std::collections::TryReserveError;

/// Weights and costs lie in [DOMAIN_MIN_FACTOR, DOMAIN_MAX_FACTOR], demands and capacities in
/// [0, MAX_AMOUNT]: wide margins around the package's documented ranges ([1e-6, 1e6] and
/// [0, 1e12], capacities to 1e18; `core/limits.py`'s `MIN_FACTOR`/`MAX_FACTOR`) inside which no
/// level, slope or sum overflows or underflows to 0. Caps and limits may be anything in
/// [0, +inf] (+inf: no limit): a lane whose cap is never reached freezes when a pool it draws on
/// saturates, at a finite level, or at its cap when it draws on none.
pub const DOMAIN_MIN_FACTOR: f64 = 1e-30;
pub const DOMAIN_MAX_FACTOR: f64 = 1e30;
pub const MAX_AMOUNT: f64 = 1e60;
/// At most this many pools (a count, not read from any sequence, so it bounds the memory asked).
pub const MAX_POOLS: usize = 1 << 22;
/// The largest replica bound a scale target may have (the package allows 1,000,000).
pub const MAX_COUNT: i64 = 1_000_000_000;

/// A topology's lanes and pools as index arrays (compressed rows, both ways).
///
/// Lane `i` draws on pools `lane_pool[lane_start[i]..lane_start[i + 1]]` at the matching
/// `lane_cost`s; pool `p`'s members are `pool_lane[pool_start[p]..pool_start[p + 1]]`, in lane
/// order (the order its sums are added up in), at the matching `pool_cost`s. Every weight and
/// cost lies in the domain above, every limit in [0, +inf], every pool index below the number of
/// pools (`pool_start.len() - 1`).
pub struct Net {
    pub weights: Vec<f64>,
    pub limits: Vec<f64>,
    pub lane_start: Vec<usize>,
    pub lane_pool: Vec<usize>,
    pub lane_cost: Vec<f64>,
    pub pool_start: Vec<usize>,
    pub pool_lane: Vec<usize>,
    pub pool_cost: Vec<f64>,
}

/// `vec![value; n]`, reserved fallibly.
fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>, TryReserveError> {
    let mut out = Vec::new();
    out.try_reserve_exact(n)?;
    out.resize(n, value);
    Ok(out)
}

impl Net {
    /// The network of `pools` pools whose lanes are given by rows (`lane_start`, `lane_pool`,
    /// `lane_cost`, as in [`Net`]), checked by the caller; the pools' rows are built here, their
    /// memory reserved fallibly (an error: no memory for them).
    pub fn new(
        weights: Vec<f64>,
        limits: Vec<f64>,
        lane_start: Vec<usize>,
        lane_pool: Vec<usize>,
        lane_cost: Vec<f64>,
        pools: usize,
    ) -> Result<Net, TryReserveError> {
        let m = pools;
        let mut pool_start = filled(m + 1, 0usize)?;
        for &p in &lane_pool {
            pool_start[p + 1] += 1;
        }
        for p in 0..m {
            pool_start[p + 1] += pool_start[p];
        }
        let mut next = filled(m + 1, 0usize)?;
        next.copy_from_slice(&pool_start);
        let mut pool_lane = filled(lane_pool.len(), 0)?;
        let mut pool_cost = filled(lane_pool.len(), 0.0)?;
        for i in 0..weights.len() {
            for k in lane_start[i]..lane_start[i + 1] {
                let p = lane_pool[k];
                pool_lane[next[p]] = i;
                pool_cost[next[p]] = lane_cost[k];
                next[p] += 1;
            }
        }
        Ok(Net {
            weights,
            limits,
            lane_start,
            lane_pool,
            lane_cost,
            pool_start,
            pool_lane,
            pool_cost,
        })
    }

    /// The number of lanes.
    pub fn lanes(&self) -> usize {
        self.weights.len()
    }

    /// The number of pools.
    pub fn pools(&self) -> usize {
        self.pool_start.len() - 1
    }
}
