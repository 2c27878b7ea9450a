//! The Python edge: every input copied into owned vectors and checked before any work.
//!
//! The copies grow fallibly (`Vec::try_reserve`): an input too large for the memory the process
//! may have raises `MemoryError` naming it, where a plain `push` would abort the interpreter. A
//! long copy checks for signals every `SIGNALS_EVERY` items (`Python::check_signals`), so Ctrl-C
//! (or any signal handler that raises) interrupts it, even on an endless iterator. The index
//! arrays built from the copies are reserved fallibly too (`Net::new`); the filling's own working
//! vectors (a fixed multiple of the copies, allocated without the GIL) are not.

use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// How many items a copy takes between two checks for signals.
const SIGNALS_EVERY: usize = 1 << 14;

pub fn no_memory(name: &str, items: usize) -> PyErr {
    PyMemoryError::new_err(format!(
        "{name}: no memory for a copy of {items} items and more"
    ))
}

/// `out.push(value)`, its growth reserved fallibly (doubling, as `push` would).
pub fn push<T>(out: &mut Vec<T>, value: T, name: &str) -> PyResult<()> {
    if out.len() == out.capacity() {
        let more = out.capacity().max(64);
        out.try_reserve(more)
            .map_err(|_| no_memory(name, out.len()))?;
    }
    out.push(value);
    Ok(())
}

/// Every `SIGNALS_EVERY` items of a copy: what a pending signal's handler raised, if any.
pub fn signals(py: Python<'_>, k: usize) -> PyResult<()> {
    if k % SIGNALS_EVERY == SIGNALS_EVERY - 1 {
        py.check_signals()?;
    }
    Ok(())
}

pub fn number(item: &Bound<'_, PyAny>, name: &str, k: usize) -> PyResult<f64> {
    item.extract::<f64>().map_err(|err| {
        let py = item.py();
        let message = format!("{name}[{k}]: expected a real number ({err})");
        if err.is_instance_of::<PyOverflowError>(py) || err.is_instance_of::<PyValueError>(py) {
            PyValueError::new_err(message)
        } else if err.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(message)
        } else {
            err // anything else an item's __float__ raised (KeyboardInterrupt...) goes through
        }
    })
}

pub fn check(value: f64, lo: f64, hi: f64, name: &str, k: usize) -> PyResult<f64> {
    if value >= lo && value <= hi {
        Ok(value + 0.0) // -0.0 becomes 0.0: no signed zero reaches a level or a heap key
    } else {
        Err(PyValueError::new_err(format!(
            "{name}[{k}]: must be a finite number in [{lo:e}, {hi:e}] (got {value:e})"
        )))
    }
}

/// An owned copy of an iterable of numbers, each in [lo, hi] (one pass over it).
pub fn numbers(obj: &Bound<'_, PyAny>, name: &str, lo: f64, hi: f64) -> PyResult<Vec<f64>> {
    let py = obj.py();
    let mut out = Vec::new();
    for (k, item) in iterate(obj, name)?.enumerate() {
        signals(py, k)?;
        push(
            &mut out,
            check(number(&item?, name, k)?, lo, hi, name, k)?,
            name,
        )?;
    }
    Ok(out)
}

pub fn iterate<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<pyo3::Bound<'py, pyo3::types::PyIterator>> {
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected numbers, got a string"
        )));
    }
    obj.try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{name}: expected an iterable")))
}

pub fn same_length(got: usize, want: usize, name: &str, of: &str) -> PyResult<()> {
    if got == want {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{name}: {got} items for {want} {of}"
        )))
    }
}
