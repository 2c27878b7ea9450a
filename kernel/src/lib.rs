//! `arklow_pulumi.core._kernel`: the progressive-filling kernel of arklow-pulumi's allocation
//! engine, built by maturin into the package itself (`pyproject.toml`, `[tool.maturin]`).
//!
//! One Python class, [`Network`]: a topology's lanes (weights, limits, `(pool, cost)`
//! incidences) checked and copied once, then filled per tick (`fill`, or `allocate`: the
//! allocation filling, both admission fillings and each pool's demand in one call). Every number
//! handed in is copied into owned vectors and checked before any work starts (`copying.rs`); a bad
//! one raises `ValueError` or `TypeError` naming it, one too large for the process's memory
//! `MemoryError`, and a signal's handler (Ctrl-C) interrupts a long copy. The GIL is released
//! only around pure Rust work on those owned copies. The filling's loops are bounded by the
//! number of events (lane freezes, pool saturations, heap refreshes), and a guard turns a breach
//! of that bound into a `RuntimeError`.
//!
//! The algorithm and its numerical care are described in `arklow_pulumi/core/filling.py`; the
//! Python oracle it must equal to the bit is `tests/reference_filling.py`.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

mod copying;
mod sizing;

use copying::{check, filled, iterate, number, numbers, push, same_length, signals};

/// Weights and costs lie in [MIN_FACTOR, MAX_FACTOR], demands and capacities in [0, MAX_AMOUNT]:
/// wide margins around the documented ranges ([1e-6, 1e6] and [0, 1e12], capacities to 1e18)
/// inside which no level, slope or sum overflows or underflows to 0. Caps and limits may be
/// anything in [0, +inf] (+inf: no limit): a lane whose cap is never reached freezes when a pool
/// it draws on saturates, at a finite level, or at its cap when it draws on none.
const MIN_FACTOR: f64 = 1e-30;
const MAX_FACTOR: f64 = 1e30;
const MAX_AMOUNT: f64 = 1e60;
/// At most this many pools (a count, not read from any sequence, so it bounds the memory asked).
const MAX_POOLS: usize = 1 << 22;
/// The largest replica bound a scale target may have (the package allows 1,000,000).
const MAX_COUNT: i64 = 1_000_000_000;
/// A pool's running slope is summed again from its unfrozen members once it falls under this
/// fraction of its value at the last exact sum: the subtractions since then were each rounded
/// to at most half an ulp of that value, so the running value keeps a relative error of at most
/// `k * 2^-53 / RECOMPUTE` after `k` of them, whatever the spread of weight x cost.
const RECOMPUTE: f64 = 1.0 / 16.0;

/// A topology's lanes and pools as index arrays (compressed rows, both ways).
struct Net {
    weights: Vec<f64>,
    limits: Vec<f64>,
    lane_start: Vec<usize>,
    lane_pool: Vec<usize>,
    lane_cost: Vec<f64>,
    pool_start: Vec<usize>,
    pool_lane: Vec<usize>,
    pool_cost: Vec<f64>,
}

struct Filled {
    allocation: Vec<f64>,
    saturated: Vec<bool>,
    used: Vec<f64>,
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
fn fill(net: &Net, caps: &[f64], capacity: &[f64]) -> Result<Filled, &'static str> {
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
    for p in 0..m {
        f.resum(p);
        f.active[p] = f.live_end[p] - net.pool_start[p];
        if f.active[p] > 0 && f.slope[p] > 0.0 {
            heap.push(Reverse(Key(capacity[p] / f.slope[p], p)));
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
fn at_least_zero(x: f64) -> f64 {
    if 0.0 > x {
        0.0
    } else {
        x
    }
}

/// Capacity a filling left unused; none in a pool it saturated.
fn unused(capacity: &[f64], filled: &Filled) -> Vec<f64> {
    capacity
        .iter()
        .zip(&filled.used)
        .zip(&filled.saturated)
        .map(|((&cap, &used), &full)| if full { 0.0 } else { at_least_zero(cap - used) })
        .collect()
}

/// Set to 0 the room of each lane that draws on a pool with nothing left; whether any lane
/// still has room.
fn fillable(net: &Net, room: &mut [f64], residual: &[f64]) -> bool {
    let mut any = false;
    for (i, r) in room.iter_mut().enumerate() {
        if *r > 0.0 {
            let blocked = (net.lane_start[i]..net.lane_start[i + 1])
                .any(|k| residual[net.lane_pool[k]] <= 0.0);
            if blocked {
                *r = 0.0;
            } else {
                any = true;
            }
        }
    }
    any
}

struct Allocated {
    caps: Vec<f64>,
    allocation: Vec<f64>,
    admission: Vec<f64>,
    pool_demand: Vec<f64>,
}

/// Allocation, admission (active lanes first, then idle ones) and each pool's demand.
fn allocate(
    net: &Net,
    demands: &[f64],
    capacity: &[f64],
    admission: bool,
) -> Result<Allocated, &'static str> {
    let limits = &net.limits;
    let caps: Vec<f64> = demands
        .iter()
        .zip(limits)
        .map(|(&d, &lim)| if d < lim { d } else { lim })
        .collect();
    let first = fill(net, &caps, capacity)?;
    let mut pool_demand = vec![0.0; capacity.len()];
    for (i, &e) in caps.iter().enumerate() {
        if e != 0.0 {
            for k in net.lane_start[i]..net.lane_start[i + 1] {
                pool_demand[net.lane_pool[k]] += e * net.lane_cost[k];
            }
        }
    }
    if !admission {
        let allocation = first.allocation.clone();
        return Ok(Allocated {
            caps,
            allocation,
            admission: first.allocation,
            pool_demand,
        });
    }
    let mut residual = unused(capacity, &first);
    let alloc = &first.allocation;
    let mut admitted = alloc.clone();
    let mut room: Vec<f64> = (0..caps.len())
        .map(|i| {
            if demands[i] > 0.0 && limits[i] > alloc[i] {
                limits[i] - alloc[i]
            } else {
                0.0
            }
        })
        .collect();
    if fillable(net, &mut room, &residual) {
        let active = fill(net, &room, &residual)?;
        residual = unused(&residual, &active);
        for (a, x) in admitted.iter_mut().zip(&active.allocation) {
            *a += x;
        }
    }
    let mut room: Vec<f64> = demands
        .iter()
        .zip(limits)
        .map(|(&d, &lim)| if d <= 0.0 { lim } else { 0.0 })
        .collect();
    if fillable(net, &mut room, &residual) {
        let idle = fill(net, &room, &residual)?;
        for (a, x) in admitted.iter_mut().zip(&idle.allocation) {
            *a += x;
        }
    }
    for (a, &lim) in admitted.iter_mut().zip(limits) {
        if *a >= lim {
            *a = lim;
        }
    }
    Ok(Allocated {
        caps,
        allocation: first.allocation,
        admission: admitted,
        pool_demand,
    })
}

// -- the Python edge (copying.rs): every input copied and checked before any work -------------

/// Four columns: `(caps, allocation, admission, pool_demand)`.
type Columns = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

fn failed(err: &'static str) -> PyErr {
    PyRuntimeError::new_err(err)
}

/// A topology's lanes for the filling: `Network(weights, limits, lane_pools, pools)`.
///
/// `lane_pools[i]` holds lane `i`'s `(pool, cost)` pairs; `pools` is the number of pools.
/// Weights and costs must lie in [1e-30, 1e30], limits in [0, +inf], pool indices in
/// [0, pools); anything else raises `ValueError` or `TypeError`. Demands and capacities handed
/// to its methods must lie in [0, 1e60], caps in [0, +inf].
#[pyclass(frozen, module = "arklow_pulumi.core._kernel")]
struct Network {
    net: Net,
}

#[pymethods]
impl Network {
    #[new]
    fn new(
        weights: &Bound<'_, PyAny>,
        limits: &Bound<'_, PyAny>,
        lane_pools: &Bound<'_, PyAny>,
        pools: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let m: usize = pools
            .extract::<i64>()
            .map_err(|_| PyTypeError::new_err("pools: expected an int"))
            .and_then(|m| {
                usize::try_from(m)
                    .ok()
                    .filter(|&m| m <= MAX_POOLS)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "pools: must be in [0, {MAX_POOLS}] (got {m})"
                        ))
                    })
            })?;
        let weights = numbers(weights, "weights", MIN_FACTOR, MAX_FACTOR)?;
        let limits = numbers(limits, "limits", 0.0, f64::INFINITY)?;
        same_length(limits.len(), weights.len(), "limits", "weights")?;
        let py = lane_pools.py();
        let mut lane_start = vec![0];
        let mut lane_pool = Vec::new();
        let mut lane_cost = Vec::new();
        for (i, lane) in iterate(lane_pools, "lane_pools")?.enumerate() {
            signals(py, i)?;
            let lane = lane?;
            for pair in iterate(&lane, "lane_pools[i]")? {
                signals(py, lane_pool.len())?;
                let (p, c): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                    pair?.extract().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "lane_pools[{i}]: expected (pool, cost) tuples"
                        ))
                    })?;
                let p = p
                    .extract::<i64>()
                    .ok()
                    .and_then(|p| usize::try_from(p).ok())
                    .filter(|&p| p < m)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "lane_pools[{i}]: a pool index must be an int in [0, {m})"
                        ))
                    })?;
                let name = format!("lane_pools[{i}] cost");
                let cost = check(number(&c, &name, 0)?, MIN_FACTOR, MAX_FACTOR, &name, 0)?;
                push(&mut lane_pool, p, "lane_pools")?;
                push(&mut lane_cost, cost, "lane_pools")?;
            }
            push(&mut lane_start, lane_pool.len(), "lane_pools")?;
        }
        same_length(lane_start.len() - 1, weights.len(), "lane_pools", "weights")?;
        // Each pool's members in lane order: the order its sums are added up in.
        let mut pool_start = filled(m + 1, 0usize, "pools")?;
        for &p in &lane_pool {
            pool_start[p + 1] += 1;
        }
        for p in 0..m {
            pool_start[p + 1] += pool_start[p];
        }
        let mut next = filled(m + 1, 0usize, "pools")?;
        next.copy_from_slice(&pool_start);
        let mut pool_lane = filled(lane_pool.len(), 0, "lane_pools")?;
        let mut pool_cost = filled(lane_pool.len(), 0.0, "lane_pools")?;
        for i in 0..weights.len() {
            for k in lane_start[i]..lane_start[i + 1] {
                let p = lane_pool[k];
                pool_lane[next[p]] = i;
                pool_cost[next[p]] = lane_cost[k];
                next[p] += 1;
            }
        }
        let net = Net {
            weights,
            limits,
            lane_start,
            lane_pool,
            lane_cost,
            pool_start,
            pool_lane,
            pool_cost,
        };
        Ok(Network { net })
    }

    /// The number of lanes.
    #[getter]
    fn lanes(&self) -> usize {
        self.net.weights.len()
    }

    /// The number of pools.
    #[getter]
    fn pools(&self) -> usize {
        self.net.pool_start.len() - 1
    }

    /// `(allocation, saturated, used)`: lanes filled by weight up to `caps` within each pool's
    /// `capacity` (usage = sum of allocation x cost); which pools saturated; each pool's usage.
    fn fill(
        &self,
        py: Python<'_>,
        caps: &Bound<'_, PyAny>,
        capacity: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<f64>, Vec<bool>, Vec<f64>)> {
        let caps = numbers(caps, "caps", 0.0, f64::INFINITY)?;
        let capacity = numbers(capacity, "capacity", 0.0, MAX_AMOUNT)?;
        same_length(caps.len(), self.lanes(), "caps", "lanes")?;
        same_length(capacity.len(), self.pools(), "capacity", "pools")?;
        let net = &self.net;
        let filled = py
            .allow_threads(|| fill(net, &caps, &capacity))
            .map_err(failed)?;
        Ok((filled.allocation, filled.saturated, filled.used))
    }

    /// `(caps, allocation, admission, pool_demand)` for lane `demands` (each lane's cap is
    /// `min(demand, limit)`) and pool `capacity`: the allocation filling; unless `admission` is
    /// false, the two admission fillings (active lanes up to their limits, then idle lanes, in
    /// what is still unused), else admission is the allocation; each pool's sum of cap x cost.
    /// A demand above `max_demand` (at most 1e60) is refused like one out of the domain.
    #[pyo3(signature = (demands, capacity, admission = true, max_demand = MAX_AMOUNT))]
    fn allocate(
        &self,
        py: Python<'_>,
        demands: &Bound<'_, PyAny>,
        capacity: &Bound<'_, PyAny>,
        admission: bool,
        max_demand: f64,
    ) -> PyResult<Columns> {
        let bound = check(max_demand, 0.0, MAX_AMOUNT, "max_demand", 0)?;
        let demands = numbers(demands, "demands", 0.0, bound)?;
        let capacity = numbers(capacity, "capacity", 0.0, MAX_AMOUNT)?;
        same_length(demands.len(), self.lanes(), "demands", "lanes")?;
        same_length(capacity.len(), self.pools(), "capacity", "pools")?;
        let net = &self.net;
        let done = py
            .allow_threads(|| allocate(net, &demands, &capacity, admission))
            .map_err(failed)?;
        Ok((done.caps, done.allocation, done.admission, done.pool_demand))
    }
}

/// Every pool's single-tick scale decision: `Sizings(pools)`, each pool a
/// `(grow, static_capacity, targets)` with `grow = 1 + headroom` in [1, 1e6], the static
/// capacity in [0, 1e60] and each target a `(units_per_replica, min_replicas, max_replicas)`
/// (units in [1e-30, 1e30], counts whole in [0, 1e9], min <= max). Anything else raises
/// `ValueError` or `TypeError`.
#[pyclass(frozen, module = "arklow_pulumi.core._kernel")]
struct Sizings {
    pools: Vec<sizing::PoolSizing>,
}

fn count(item: &Bound<'_, PyAny>, name: &str, k: usize) -> PyResult<i64> {
    let value = item
        .extract::<i64>()
        .map_err(|_| PyTypeError::new_err(format!("{name}[{k}]: expected a whole number")))?;
    if (0..=MAX_COUNT).contains(&value) {
        Ok(value)
    } else {
        Err(PyValueError::new_err(format!(
            "{name}[{k}]: must be in [0, {MAX_COUNT}] (got {value})"
        )))
    }
}

fn pool_sizing(item: &Bound<'_, PyAny>, p: usize) -> PyResult<sizing::PoolSizing> {
    let (grow, static_capacity, targets): (f64, f64, Bound<'_, PyAny>) =
        item.extract().map_err(|_| {
            PyTypeError::new_err(format!("pools[{p}]: expected (grow, static, targets)"))
        })?;
    let grow = check(grow, 1.0, MAX_FACTOR, "grow", p)?;
    let static_capacity = check(static_capacity, 0.0, MAX_AMOUNT, "static_capacity", p)?;
    let mut pool = sizing::PoolSizing {
        grow,
        static_capacity,
        units_per_replica: Vec::new(),
        lows: Vec::new(),
        highs: Vec::new(),
    };
    for (k, target) in iterate(&targets, "targets")?.enumerate() {
        signals(item.py(), k)?;
        let target = target?;
        let (upr, lo, hi): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) =
            target.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "pools[{p}] targets[{k}]: expected (units, min, max)"
                ))
            })?;
        let upr = check(
            number(&upr, "units_per_replica", k)?,
            MIN_FACTOR,
            MAX_FACTOR,
            "units_per_replica",
            k,
        )?;
        let (lo, hi) = (
            count(&lo, "min_replicas", k)?,
            count(&hi, "max_replicas", k)?,
        );
        if lo > hi {
            return Err(PyValueError::new_err(format!(
                "pools[{p}] targets[{k}]: min_replicas {lo} is above max_replicas {hi}"
            )));
        }
        push(&mut pool.units_per_replica, upr, "targets")?;
        push(&mut pool.lows, lo, "targets")?;
        push(&mut pool.highs, hi, "targets")?;
    }
    Ok(pool)
}

#[pymethods]
impl Sizings {
    #[new]
    fn new(pools: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut out = Vec::new();
        for (p, item) in iterate(pools, "pools")?.enumerate() {
            signals(pools.py(), p)?;
            push(&mut out, pool_sizing(&item?, p)?, "pools")?;
        }
        Ok(Sizings { pools: out })
    }

    /// The number of pools.
    #[getter]
    fn pools(&self) -> usize {
        self.pools.len()
    }

    /// Each pool's replica count per target (a tuple, in target order) for its `demands`
    /// (finite, >= 0, one per pool).
    fn desired<'py>(
        &self,
        py: Python<'py>,
        demands: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyTuple>>> {
        let demands = numbers(demands, "demands", 0.0, MAX_AMOUNT)?;
        same_length(demands.len(), self.pools.len(), "demands", "pools")?;
        let pools = &self.pools;
        let counts: Vec<Vec<i64>> = py.allow_threads(|| {
            pools
                .iter()
                .zip(&demands)
                .map(|(pool, &d)| sizing::desired(pool, d))
                .collect()
        });
        counts
            .into_iter()
            .map(|c| pyo3::types::PyTuple::new(py, c))
            .collect()
    }
}

#[pymodule]
fn _kernel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The distribution's version: pyproject.toml takes it from this crate's Cargo.toml.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Network>()?;
    m.add_class::<Sizings>()?;
    m.add("MAX_COUNT", MAX_COUNT)?;
    m.add("MIN_FACTOR", MIN_FACTOR)?;
    m.add("MAX_FACTOR", MAX_FACTOR)?;
    m.add("MAX_AMOUNT", MAX_AMOUNT)?;
    m.add("MAX_POOLS", MAX_POOLS)?;
    Ok(())
}
