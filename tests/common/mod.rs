//! Helpers shared by the integration tests (`mod common;` in each test file).
//!
//! Not every test file uses every item, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod gpu;
pub mod strategies;
