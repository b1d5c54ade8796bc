//! `monoscan cache list|clear|dir`: the on-disk kernel cache.

use super::{human_bytes, write_stdout, CliError};
use monoscan::cache::KernelCache;

/// What to do with the cache.
#[derive(clap::Subcommand, Debug, Clone, Copy)]
pub enum CacheCommand {
    /// List the cached modules (path, size, what they are).
    List,
    /// Remove every cached module.
    Clear,
    /// Print the cache folder.
    Dir,
}

/// Runs `monoscan cache ...` on the process-wide cache (`$MONOSCAN_CACHE_DIR`, or the
/// platform cache folder).
pub fn cache(cmd: CacheCommand) -> Result<(), CliError> {
    let cache = KernelCache::global();
    let Some(dir) = cache.dir().map(|d| d.to_path_buf()) else {
        return write_stdout(
            "the disk cache is off (MONOSCAN_CACHE_DIR=off): kernels are cached in memory only\n",
        );
    };
    match cmd {
        CacheCommand::Dir => write_stdout(&format!("{}\n", dir.display())),
        CacheCommand::List => {
            let entries = cache.list()?;
            let mut text = String::new();
            let mut total = 0;
            for (path, size, label) in &entries {
                total += size;
                text.push_str(&format!(
                    "{:>10}  {label}  {}\n",
                    human_bytes(*size),
                    path.display()
                ));
            }
            text.push_str(&format!(
                "{} module(s), {} in {}\n",
                entries.len(),
                human_bytes(total),
                dir.display()
            ));
            write_stdout(&text)
        }
        CacheCommand::Clear => {
            let n = cache.clear_disk()?;
            write_stdout(&format!("removed {n} module(s) from {}\n", dir.display()))
        }
    }
}
