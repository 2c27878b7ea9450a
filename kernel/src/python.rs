//! The Python edge, `arklow_pulumi.core._kernel` (built with the `extension-module` feature):
//! the classes [`Network`] and [`Sizings`] and the module's constants.
//!
//! Every number handed in is copied into owned vectors and checked before any work starts
//! (`copying.rs`); a bad one raises `ValueError` or `TypeError` naming it, one too large for the
//! process's memory `MemoryError`, and a signal's handler (Ctrl-C) interrupts a long copy. The
//! GIL is released only around pure Rust work on those owned copies (`filling.rs`,
//! `dividing.rs`, `sizing.rs`), and an error of that work (a breach of the filling's bound of
//! events, a bug) raises `RuntimeError`.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::copying::{check, iterate, no_memory, number, numbers, push, same_length, signals};
use crate::dividing::allocate;
use crate::filling::fill;
use crate::net::{Net, DOMAIN_MAX_FACTOR, DOMAIN_MIN_FACTOR, MAX_AMOUNT, MAX_COUNT, MAX_POOLS};

/// What `Network.fill` returns: each lane's allocation, which pools saturated, each pool's usage
/// (lists made once, read by name).
#[pyclass(frozen, module = "arklow_pulumi.core._kernel")]
struct Filled {
    #[pyo3(get)]
    allocation: Py<PyList>,
    #[pyo3(get)]
    saturated: Py<PyList>,
    #[pyo3(get)]
    used: Py<PyList>,
}

/// What `Network.allocate` returns: each lane's cap, allocation and admission, each pool's
/// demand (lists made once, read by name).
#[pyclass(frozen, module = "arklow_pulumi.core._kernel")]
struct Allocated {
    #[pyo3(get)]
    caps: Py<PyList>,
    #[pyo3(get)]
    allocation: Py<PyList>,
    #[pyo3(get)]
    admission: Py<PyList>,
    #[pyo3(get)]
    pool_demand: Py<PyList>,
}

/// A Python list of `items`, made once.
fn list<T: for<'py> IntoPyObject<'py>>(py: Python<'_>, items: Vec<T>) -> PyResult<Py<PyList>> {
    Ok(PyList::new(py, items)?.unbind())
}

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
        let weights = numbers(weights, "weights", DOMAIN_MIN_FACTOR, DOMAIN_MAX_FACTOR)?;
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
                let cost = check(
                    number(&c, &name, 0)?,
                    DOMAIN_MIN_FACTOR,
                    DOMAIN_MAX_FACTOR,
                    &name,
                    0,
                )?;
                push(&mut lane_pool, p, "lane_pools")?;
                push(&mut lane_cost, cost, "lane_pools")?;
            }
            push(&mut lane_start, lane_pool.len(), "lane_pools")?;
        }
        same_length(lane_start.len() - 1, weights.len(), "lane_pools", "weights")?;
        let pairs = lane_pool.len();
        let net = Net::new(weights, limits, lane_start, lane_pool, lane_cost, m)
            .map_err(|_| no_memory("lane_pools", pairs))?;
        Ok(Network { net })
    }

    /// The number of lanes.
    #[getter]
    fn lanes(&self) -> usize {
        self.net.lanes()
    }

    /// The number of pools.
    #[getter]
    fn pools(&self) -> usize {
        self.net.pools()
    }

    /// A [`Filled`]: lanes filled by weight up to `caps` within each pool's `capacity` (usage =
    /// sum of allocation x cost) as `allocation`; which pools `saturated`; each pool's `used`.
    fn fill(
        &self,
        py: Python<'_>,
        caps: &Bound<'_, PyAny>,
        capacity: &Bound<'_, PyAny>,
    ) -> PyResult<Filled> {
        let caps = numbers(caps, "caps", 0.0, f64::INFINITY)?;
        let capacity = numbers(capacity, "capacity", 0.0, MAX_AMOUNT)?;
        same_length(caps.len(), self.lanes(), "caps", "lanes")?;
        same_length(capacity.len(), self.pools(), "capacity", "pools")?;
        let net = &self.net;
        let filled = py
            .allow_threads(|| fill(net, &caps, &capacity))
            .map_err(failed)?;
        Ok(Filled {
            allocation: list(py, filled.allocation)?,
            saturated: list(py, filled.saturated)?,
            used: list(py, filled.used)?,
        })
    }

    /// An [`Allocated`] for lane `demands` and pool `capacity`: each lane's `caps` (`min(demand,
    /// limit)`); the `allocation` filling; unless `admission` is false, the two admission
    /// fillings (active lanes up to their limits, then idle lanes, in what is still unused), else
    /// the `admission` is the allocation; each pool's `pool_demand`, the sum of cap x cost.
    /// A demand above `max_demand` (at most 1e60) is refused like one out of the domain.
    #[pyo3(signature = (demands, capacity, admission = true, max_demand = MAX_AMOUNT))]
    fn allocate(
        &self,
        py: Python<'_>,
        demands: &Bound<'_, PyAny>,
        capacity: &Bound<'_, PyAny>,
        admission: bool,
        max_demand: f64,
    ) -> PyResult<Allocated> {
        let bound = check(max_demand, 0.0, MAX_AMOUNT, "max_demand", 0)?;
        let demands = numbers(demands, "demands", 0.0, bound)?;
        let capacity = numbers(capacity, "capacity", 0.0, MAX_AMOUNT)?;
        same_length(demands.len(), self.lanes(), "demands", "lanes")?;
        same_length(capacity.len(), self.pools(), "capacity", "pools")?;
        let net = &self.net;
        let done = py
            .allow_threads(|| allocate(net, &demands, &capacity, admission))
            .map_err(failed)?;
        Ok(Allocated {
            caps: list(py, done.caps)?,
            allocation: list(py, done.allocation)?,
            admission: list(py, done.admission)?,
            pool_demand: list(py, done.pool_demand)?,
        })
    }
}

/// Every pool's single-tick scale decision: `Sizings(pools)`, each pool a
/// `(grow, static_capacity, targets)` with `grow = 1 + headroom` in [1, 1e6], the static
/// capacity in [0, 1e60] and each target a `(units_per_replica, min_replicas, max_replicas)`
/// (units in [1e-30, 1e30], counts whole in [0, 1e9], min <= max). Anything else raises
/// `ValueError` or `TypeError`.
#[pyclass(frozen, module = "arklow_pulumi.core._kernel")]
struct Sizings {
    pools: Vec<crate::sizing::PoolSizing>,
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

fn pool_sizing(item: &Bound<'_, PyAny>, p: usize) -> PyResult<crate::sizing::PoolSizing> {
    let (grow, static_capacity, targets): (f64, f64, Bound<'_, PyAny>) =
        item.extract().map_err(|_| {
            PyTypeError::new_err(format!("pools[{p}]: expected (grow, static, targets)"))
        })?;
    let grow = check(grow, 1.0, DOMAIN_MAX_FACTOR, "grow", p)?;
    let static_capacity = check(static_capacity, 0.0, MAX_AMOUNT, "static_capacity", p)?;
    let mut pool = crate::sizing::PoolSizing {
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
            DOMAIN_MIN_FACTOR,
            DOMAIN_MAX_FACTOR,
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
                .map(|(pool, &d)| crate::sizing::desired(pool, d))
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
    m.add_class::<Filled>()?;
    m.add_class::<Allocated>()?;
    m.add_class::<Sizings>()?;
    m.add("MAX_COUNT", MAX_COUNT)?;
    m.add("DOMAIN_MIN_FACTOR", DOMAIN_MIN_FACTOR)?;
    m.add("DOMAIN_MAX_FACTOR", DOMAIN_MAX_FACTOR)?;
    m.add("MAX_AMOUNT", MAX_AMOUNT)?;
    m.add("MAX_POOLS", MAX_POOLS)?;
    Ok(())
}
