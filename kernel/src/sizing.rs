//! The single-tick scale decision of every pool: how many replicas each of its targets should
//! run for the pool's demand (the rule that `arklow_pulumi.core.scaling` hands to this kernel).
//!
//! A pool's targets must supply `demand x grow - static` units (`grow` is `1 + headroom`; float
//! noise of a full cover is no shortfall). Those units are split across the targets in
//! proportion to each target's largest supply (`max x units per replica`), shares below a
//! target's `min` or above its `max` fixed at that bound first and the rest shared again among
//! the others. Each share becomes whole replicas rounded down (tolerant of float noise, at least
//! 0, within the target's bounds), then rounded up one replica at a time, largest remainder
//! first (ties to the first target), only until the units are covered.
//!
//! The operations and their order are those of the Python oracle in the tests
//! (`tests/reference_scaling.py`), so the counts agree exactly.

const EPS: f64 = 1e-9;

/// One pool as the decision reads it, checked at the edge.
pub struct PoolSizing {
    pub grow: f64,
    pub static_capacity: f64,
    pub units_per_replica: Vec<f64>,
    pub lows: Vec<i64>,
    pub highs: Vec<i64>,
}

impl PoolSizing {
    fn low_units(&self, k: usize) -> f64 {
        self.lows[k] as f64 * self.units_per_replica[k]
    }

    fn high_units(&self, k: usize) -> f64 {
        self.highs[k] as f64 * self.units_per_replica[k]
    }
}

/// Each target's share of `units` (see the module doc).
fn split(units: f64, pool: &PoolSizing) -> Vec<f64> {
    let n = pool.units_per_replica.len();
    let mut total = 0.0;
    for k in 0..n {
        total += pool.high_units(k);
    }
    let level = if total > 0.0 { units / total } else { 0.0 };
    let first: Vec<f64> = (0..n).map(|k| pool.high_units(k) * level).collect();
    if (0..n).all(|k| pool.low_units(k) <= first[k] && first[k] <= pool.high_units(k)) {
        return first;
    }
    let mut share: Vec<Option<f64>> = vec![None; n];
    // Each round fixes at least one share or ends: at most n + 1 rounds.
    for _round in 0..=n {
        let free: Vec<usize> = (0..n).filter(|&k| share[k].is_none()).collect();
        if free.is_empty() {
            break;
        }
        let mut fixed = 0.0;
        for s in share.iter().flatten() {
            fixed += s;
        }
        let left = units - fixed;
        let mut total = 0.0;
        for &k in &free {
            total += pool.high_units(k);
        }
        let level = if total > 0.0 { left / total } else { 0.0 };
        let mut changed = false;
        for &k in &free {
            let (low, high) = (pool.low_units(k), pool.high_units(k));
            let x = high * level;
            if x < low || x > high {
                share[k] = Some(if x < low { low } else { high });
                changed = true;
            }
        }
        if !changed {
            for &k in &free {
                share[k] = Some(pool.high_units(k) * level);
            }
        }
    }
    share.into_iter().map(|s| s.unwrap_or(0.0)).collect()
}

/// Replicas of one pool's targets for `demand` (finite, >= 0).
pub fn desired(pool: &PoolSizing, demand: f64) -> Vec<i64> {
    let n = pool.units_per_replica.len();
    if n == 0 {
        return Vec::new();
    }
    let needed = demand * pool.grow;
    let rest = needed - pool.static_capacity;
    let units = if rest > EPS * needed { rest } else { 0.0 };
    let shares = split(units, pool);
    let exact: Vec<f64> = (0..n)
        .map(|k| shares[k] / pool.units_per_replica[k])
        .collect();
    let mut counts: Vec<i64> = (0..n)
        .map(|k| {
            let x = exact[k];
            let size = if x > 1.0 {
                x
            } else if x < -1.0 {
                -x
            } else {
                1.0
            };
            let floor = (x + EPS * size).floor();
            let floor = if floor > 0.0 { floor } else { 0.0 };
            // clamp: min with the high bound, then max with the low one (as core.policy.clamp)
            let (lo, hi) = (pool.lows[k] as f64, pool.highs[k] as f64);
            let v = if floor < hi { floor } else { hi };
            (if v > lo { v } else { lo }) as i64
        })
        .collect();
    let tolerance = EPS * if units > 1.0 { units } else { 1.0 };
    // Each round adds a replica below some target's max: bounded by the sum of the maxima.
    loop {
        let mut supplied = 0.0;
        for (&c, &u) in counts.iter().zip(&pool.units_per_replica) {
            supplied += c as f64 * u;
        }
        if units - supplied <= tolerance {
            break;
        }
        let mut best: Option<usize> = None;
        for k in 0..n {
            if counts[k] >= pool.highs[k] {
                continue;
            }
            best = match best {
                Some(b) if exact[b] - counts[b] as f64 >= exact[k] - counts[k] as f64 => Some(b),
                _ => Some(k),
            };
        }
        match best {
            Some(k) => counts[k] += 1,
            None => break,
        }
    }
    counts
}
