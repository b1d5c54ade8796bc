//! What a device allows a block and an SM: shared memory and threads.

/// Shared-memory and thread limits of a device, which the shape policy checks shapes against
/// and the staged kernels' residency is computed from.
///
/// For a [`crate::Gpu`] they come from the driver ([`crate::DeviceInfo::limits`]); code
/// generated without a device ([`DeviceLimits::for_arch`], `monoscan emit --arch`) uses the
/// architecture's published figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceLimits {
    /// Compute capability as `major * 10 + minor` (`90`).
    pub cc: u32,
    /// Shared memory a block may use without opting in (static shared memory's limit), bytes.
    pub shared_per_block: u32,
    /// Shared memory a block may use after opting in (dynamic shared memory), bytes.
    pub shared_per_block_optin: u32,
    /// Shared memory of one SM, bytes.
    pub shared_per_sm: u32,
    /// Shared memory the system reserves for each resident block, bytes.
    pub reserved_shared_per_block: u32,
    /// Threads one SM holds at once.
    pub threads_per_sm: u32,
}

impl DeviceLimits {
    /// The published limits of compute capability `cc` (CUDA C++ Programming Guide, "Technical
    /// Specifications per Compute Capability"), for generating code without a device. An
    /// architecture newer than the table gets the newest entry of its major version, or of
    /// sm_90.
    ///
    /// ```
    /// use monoscan::tuning::DeviceLimits;
    /// let h100 = DeviceLimits::for_arch(90);
    /// assert_eq!(h100.shared_per_sm, 228 * 1024);
    /// assert_eq!(h100.shared_per_block_optin, 227 * 1024);
    /// ```
    pub fn for_arch(cc: u32) -> Self {
        // (shared per SM in KiB, opt-in per block in KiB, reserved per block, threads per SM)
        let (sm_kib, optin_kib, reserved, threads) = match cc {
            0..=69 => (48, 48, 0, 2048),
            70..=72 => (96, 96, 0, 2048),
            73..=79 => (64, 64, 0, 1024),
            80 | 87 => (164, 163, 1024, 2048),
            81..=89 => (100, 99, 1024, 1536),
            90..=119 => (228, 227, 1024, 2048),
            _ => (100, 99, 1024, 1536),
        };
        DeviceLimits {
            cc,
            shared_per_block: 48 * 1024,
            shared_per_block_optin: optin_kib * 1024,
            shared_per_sm: sm_kib * 1024,
            reserved_shared_per_block: reserved,
            threads_per_sm: threads,
        }
    }

    /// Blocks of `threads` threads using `smem` bytes of shared memory each that fit one SM
    /// (at least one).
    pub fn blocks_per_sm(&self, threads: u32, smem: usize) -> u32 {
        let per_block = smem + self.reserved_shared_per_block as usize;
        let by_smem = (self.shared_per_sm as usize / per_block.max(1)) as u32;
        by_smem.min(self.threads_per_sm / threads.max(1)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_holds_five_44_kib_tiles_and_thirteen_16_kib_ones() {
        let l = DeviceLimits::for_arch(90);
        assert_eq!(l.blocks_per_sm(352, 44 * 1024 + 160), 5);
        assert_eq!(l.blocks_per_sm(128, 16 * 1024), 13);
        assert_eq!(l.blocks_per_sm(1024, 0), 2);
        assert_eq!(
            DeviceLimits::for_arch(80).shared_per_block_optin,
            163 * 1024
        );
        assert_eq!(DeviceLimits::for_arch(75).threads_per_sm, 1024);
    }
}
