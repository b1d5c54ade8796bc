//! The text form every tuning record shares: a magic line, the crate's version, the size the
//! candidates were timed on (`n`), the record's own lines, then one `timed <ms> <name>` line per
//! candidate.

use crate::error::{Error, Result};

/// The error of a record of kind `what` (`tuning record`) that cannot be read, and why.
pub(super) fn bad(what: &str, why: &str) -> Error {
    Error::invalid(format!("{what}: {why}"))
}

/// The first lines of a record: `magic`, this crate's version and `n`.
pub(super) fn head(magic: &str, n: u64) -> String {
    format!("{magic}\nversion {}\nn {n}\n", env!("CARGO_PKG_VERSION"))
}

/// The last lines of a record: one per candidate, its median time and its name.
pub(super) fn tail(timings: &[(String, f64)]) -> String {
    timings
        .iter()
        .map(|(name, ms)| format!("timed {ms:.6} {name}\n"))
        .collect()
}

/// Reads the first lines of a record of kind `what` written with `magic`: its `n` and the lines
/// after them; `Err` for another format or crate version.
pub(super) fn read_head<'a>(
    text: &'a str,
    magic: &str,
    what: &str,
) -> Result<(u64, std::str::Lines<'a>)> {
    let mut lines = text.lines();
    if lines.next() != Some(magic) {
        return Err(bad(what, "not a monoscan tuning record of this kind"));
    }
    if lines.next() != Some(&format!("version {}", env!("CARGO_PKG_VERSION"))) {
        return Err(bad(what, "written by another version of monoscan"));
    }
    let n = lines
        .next()
        .and_then(|l| l.strip_prefix("n "))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad(what, "no size"))?;
    Ok((n, lines))
}

/// The numbers of a `shape ...` line (none for another line, or none at all).
pub(super) fn shape_fields(line: Option<&str>) -> Vec<u32> {
    line.and_then(|l| l.strip_prefix("shape "))
        .map(|l| l.split(' ').filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default()
}

/// The candidates' names and times among `lines` (the `timed` lines).
pub(super) fn timings<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<(String, f64)> {
    lines
        .into_iter()
        .filter_map(|l| l.strip_prefix("timed "))
        .filter_map(|l| {
            let (ms, name) = l.split_once(' ')?;
            Some((name.to_string(), ms.parse().ok()?))
        })
        .collect()
}
