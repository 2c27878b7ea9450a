//! One tick's allocation of a [`Net`]: the caps `min(demand, limit)`, the allocation filling,
//! the two admission fillings (active lanes, then idle ones, in what is still unused) and each
//! pool's demand, in one call (`arklow_pulumi/core/allocating.py` describes what they mean).

use crate::filling::{at_least_zero, fill, Filled};
use crate::net::Net;

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

/// The results of [`allocate`]: each lane's cap (`min(demand, limit)`), allocation and
/// admission, and each pool's demand (the sum of its lanes' cap x cost).
pub struct Allocated {
    pub caps: Vec<f64>,
    pub allocation: Vec<f64>,
    pub admission: Vec<f64>,
    pub pool_demand: Vec<f64>,
}

/// Allocation, admission (active lanes first, then idle ones) and each pool's demand.
///
/// `demands` has one entry per lane (each in [0, MAX_AMOUNT]), `capacity` one per pool. The
/// allocation is the filling of the caps `min(demand, limit)` (see [`fill`]). Unless `admission`
/// is false, the admission adds to it two more fillings in what the allocation left unused:
/// first the active lanes (demand > 0) up to their limits, then the idle lanes (demand 0), so
/// idle lanes come last; each lane's admission is at least its allocation and at most its limit.
/// Without admission, the admission is the allocation.
pub fn allocate(
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
