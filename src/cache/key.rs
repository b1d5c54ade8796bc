//! Cache keys: a SHA-256 of everything that determines the compiled bytes.

use sha2::{Digest, Sha256};

/// Bumped whenever the on-disk format or the meaning of a key changes.
pub const FORMAT_VERSION: u32 = 1;

/// The key of a compiled module: SHA-256, hex, over the format version, the crate version, the
/// full rendered source, the canonical option list, the NVRTC version and the target.
pub fn derive(source: &str, options: &[String], nvrtc: (i32, i32), target: &str) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(&FORMAT_VERSION.to_le_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(source.as_bytes());
    for o in options {
        field(o.as_bytes());
    }
    field(format!("{}.{}", nvrtc.0, nvrtc.1).as_bytes());
    field(target.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_changes_the_key() {
        let opts = vec!["-a".to_string()];
        let base = derive("src", &opts, (13, 0), "sm_90");
        assert_eq!(base.len(), 64);
        assert_eq!(base, derive("src", &opts, (13, 0), "sm_90"));
        assert_ne!(base, derive("src2", &opts, (13, 0), "sm_90"));
        assert_ne!(base, derive("src", &["-b".to_string()], (13, 0), "sm_90"));
        assert_ne!(base, derive("src", &opts, (13, 1), "sm_90"));
        assert_ne!(base, derive("src", &opts, (13, 0), "sm_80"));
        // Field boundaries are unambiguous.
        assert_ne!(
            derive("ab", &["c".to_string()], (13, 0), "x"),
            derive("a", &["bc".to_string()], (13, 0), "x")
        );
    }
}
