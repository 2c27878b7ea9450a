//! The progressive-filling kernel of arklow-pulumi's allocation engine, built by maturin into the
//! package itself as `arklow_pulumi.core._kernel` (`pyproject.toml`, `[tool.maturin]`).
//!
//! The pure algorithm, with no Python in it (what `cargo test` checks):
//!
//! - `net.rs`: a topology's lanes and pools as index arrays ([`net::Net`]), and the domain every
//!   number must lie in;
//! - `filling.rs`: weighted progressive filling ([`filling::fill`]);
//! - `dividing.rs`: one tick's caps, allocation, admission and pool demand
//!   ([`dividing::allocate`]);
//! - `sizing.rs`: every pool's single-tick scale decision ([`sizing::desired`]).
//!
//! The Python edge, compiled only with the `extension-module` feature (maturin enables it):
//! `python.rs` (the classes `Network` and `Sizings`, the module) and `copying.rs` (every input
//! copied and checked before any work).

pub mod dividing;
pub mod filling;
pub mod net;
pub mod sizing;

#[cfg(feature = "extension-module")]
mod copying;
#[cfg(feature = "extension-module")]
mod python;

#[cfg(test)]
mod tests;
