//! One operator's kernels on one device: its tile shapes, its combine form, and which kernel
//! sets each algorithm and each call loads. The GPU executor launches what [`Plan::scan_set`]
//! and [`Plan::reduce_set`] name, `Scanner::prepare` compiles [`Plan::sets`] (or
//! [`Plan::sets_for`] one call size), and [`crate::cache::KernelCache::warm`] compiles the same
//! sets without a device, so that a warmed disk cache holds exactly what a later process loads.

use super::autotune::{self, Record, MIN_TUNING_BYTES};
use super::cost::CombineCost;
use super::{
    policy, CombineForm, DeviceLimits, Purpose, ShapeChoice, ShareScan, TileShape, Tuning,
};
use crate::algorithm::Algorithm;
use crate::cache::OpKey;
use crate::codegen::{KernelSet, KernelSpec};
use crate::error::Result;
use crate::monoid::CudaOp;
use std::sync::{Mutex, OnceLock};

/// The kernel plan of one operator on one device (or architecture) under one tuning.
///
/// ```
/// use monoscan::ops::Sum;
/// use monoscan::tuning::{plan::Plan, DeviceLimits, Tuning};
/// use monoscan::codegen::KernelSet;
/// use monoscan::{Algorithm, Monoid};
/// let plan = Plan::new(&Sum::<i32>::new().cuda(), DeviceLimits::for_arch(90), &Tuning::default());
/// // A scan of 2^10 elements runs the one-tile kernel alone; of 2^24, the staged scan.
/// let small = plan.scan_set(Algorithm::Auto, 1 << 10, true)?;
/// assert!(matches!(small, KernelSet::OneTile(_)));
/// assert!(matches!(plan.scan_set(Algorithm::Auto, 1 << 24, true)?, KernelSet::StagedScan(_)));
/// // `prepare` compiles every set the default algorithm may load: the single-pass scan, its
/// // staged form in the large and the small-input tiles, the tiled reduce, and the one-tile
/// // scan in the single-pass and small shapes.
/// assert_eq!(plan.sets(Algorithm::Auto)?.len(), 6);
/// # Ok::<(), monoscan::Error>(())
/// ```
#[derive(Debug)]
pub struct Plan {
    elem_size: usize,
    /// The input map's input size, for operators with one.
    in_size: Option<usize>,
    limits: DeviceLimits,
    tuning: Tuning,
    combine: CombineForm,
    cost: CombineCost,
    deterministic: bool,
    shapes: [OnceLock<TileShape>; 5],
    /// The staged scan's shape found by autotuning, where one is known (it replaces the
    /// policy's).
    tuned: OnceLock<TileShape>,
    /// Whether autotuning found the share scan faster than every staged shape, where it timed
    /// it.
    tuned_shares: OnceLock<bool>,
    /// The combine form autotuning found faster, where it timed both.
    tuned_combine: OnceLock<CombineForm>,
    /// The staged scan's shape for small inputs, where the policy has one.
    small: OnceLock<Option<TileShape>>,
    /// The column scan's tiles found by autotuning, by strip width and direction.
    columns: Mutex<Vec<((u32, bool), ShapeChoice)>>,
    /// The staged reduce's tile for large inputs found by autotuning, where one is known.
    tuned_reduce: OnceLock<ShapeChoice>,
}

impl Plan {
    /// The plan of `op` on a device with `limits` under `tuning` (not deterministic).
    pub fn new(op: &CudaOp, limits: DeviceLimits, tuning: &Tuning) -> Plan {
        Plan::with_cost(op, CombineCost::of(op), limits, tuning)
    }

    /// [`Plan::new`] for an interned operator, whose combine's cost is already estimated.
    pub fn for_key(op: &OpKey, limits: DeviceLimits, tuning: &Tuning) -> Plan {
        Plan::with_cost(op.op(), op.cost(), limits, tuning)
    }

    fn with_cost(op: &CudaOp, cost: CombineCost, limits: DeviceLimits, tuning: &Tuning) -> Plan {
        Plan {
            elem_size: op.elem_size,
            in_size: op.input.as_ref().map(|m| m.in_size),
            limits,
            tuning: tuning.clone(),
            combine: policy::combine_form(&cost, tuning),
            cost,
            deterministic: false,
            shapes: Default::default(),
            tuned: OnceLock::new(),
            tuned_shares: OnceLock::new(),
            tuned_combine: OnceLock::new(),
            small: OnceLock::new(),
            columns: Mutex::new(Vec::new()),
            tuned_reduce: OnceLock::new(),
        }
    }

    /// The combine's estimated cost.
    pub fn cost(&self) -> CombineCost {
        self.cost
    }

    /// Runs the staged scan in `shape` (an autotuned shape for this operator and device) from
    /// now on; a plan takes one tuned shape, later ones are ignored. Returns the shape in use.
    pub fn install_tuned(&self, shape: TileShape) -> TileShape {
        *self.tuned.get_or_init(|| shape)
    }

    /// Installs what autotuning recorded for this operator on this device: the staged scan's
    /// shape ([`Plan::install_tuned`]), whether 1-D scans take the share scan
    /// ([`Plan::install_share_scan`]) and, where it names one and the tuning sets none, the
    /// combine form every module of the plan is built in from now on (the first form installed
    /// stays). Returns the shape in use.
    pub fn install_record(&self, record: &Record) -> TileShape {
        self.install_share_scan(record.shares);
        if let (Some(form), None) = (record.combine, self.tuning.combine) {
            self.tuned_combine.get_or_init(|| form);
        }
        self.install_tuned(record.shape)
    }

    /// Runs column scans of strips of `strip` columns, forwards or in `reverse`, in the tile of
    /// `choice` (autotuned for this operator and device) from now on; the first choice
    /// installed for a strip width and direction stays. Returns the choice in use.
    pub fn install_column(&self, strip: u32, reverse: bool, choice: ShapeChoice) -> ShapeChoice {
        let mut tuned = self.columns.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, c)) = tuned.iter().find(|(k, _)| *k == (strip, reverse)) {
            return *c;
        }
        tuned.push(((strip, reverse), choice));
        choice
    }

    /// The autotuned tile of column scans of strips of `strip` columns, forwards or in
    /// `reverse`, if one was installed.
    pub fn tuned_column(&self, strip: u32, reverse: bool) -> Option<ShapeChoice> {
        let tuned = self.columns.lock().unwrap_or_else(|p| p.into_inner());
        tuned
            .iter()
            .find(|(k, _)| *k == (strip, reverse))
            .map(|(_, c)| *c)
    }

    /// Runs reductions of at least [`MIN_TUNING_BYTES`] that take the staged reduce in the
    /// tile of `choice` (autotuned for this operator and device) from now on; the first
    /// choice installed stays. Returns the choice in use.
    pub fn install_reduce(&self, choice: ShapeChoice) -> ShapeChoice {
        *self.tuned_reduce.get_or_init(|| choice)
    }

    /// The autotuned tile of the staged reduce, if one was installed.
    pub fn tuned_reduce(&self) -> Option<ShapeChoice> {
        self.tuned_reduce.get().copied()
    }

    /// The staged-reduce tiles the autotuner times for this operator
    /// ([`autotune::reduce::candidates`]), as this plan runs them (with its chains); empty
    /// where large reductions do not take the staged reduce tile by tile, or an input map
    /// changes the element size.
    pub fn reduce_candidates(&self) -> Vec<TileShape> {
        if self.changes_size() {
            return Vec::new();
        }
        autotune::reduce::candidates(self.elem_size, &self.cost, &self.limits, &self.tuning)
            .into_iter()
            .map(|s| self.fit(s, true))
            .collect()
    }

    /// The autotuned shape of the staged scan, if one was installed.
    pub fn tuned(&self) -> Option<TileShape> {
        self.tuned.get().copied()
    }

    /// Runs 1-D scans in the share scan's form (where it applies) from now on when `on`, under
    /// [`ShareScan::Auto`]: what autotuning found. A plan takes one answer, later ones are
    /// ignored. Returns the answer in use.
    pub fn install_share_scan(&self, on: bool) -> bool {
        *self.tuned_shares.get_or_init(|| on)
    }

    /// The share scan's module ([`KernelSet::ShareScan`], in the staged reduce's shape), unless
    /// the tuning says never or the form does not apply to this operator and device (the TMA
    /// forms, share steps that fit shared memory, an input map that keeps the element size).
    pub fn share_scan_set(&self) -> Result<Option<KernelSet>> {
        if self.tuning.share_scan == ShareScan::Never || self.deterministic || self.changes_size() {
            return Ok(None);
        }
        let shape = self.shape(Purpose::StagedReduce)?;
        Ok(shape
            .shares_fit(self.elem_size)
            .then_some(KernelSet::ShareScan {
                shape,
                stages: policy::share_scan_stages(&self.tuning),
                reverse: false,
            }))
    }

    /// Whether 1-D scans run in the share scan's form where it applies: always under
    /// [`ShareScan::Always`], never under [`ShareScan::Never`], and under [`ShareScan::Auto`]
    /// where autotuning found it the fastest.
    pub fn share_scan(&self) -> bool {
        match self.tuning.share_scan {
            ShareScan::Always => true,
            ShareScan::Never => false,
            ShareScan::Auto => self.tuned_shares.get() == Some(&true),
        }
    }

    /// Whether autotuning times the share scan beside the staged shapes: under
    /// [`ShareScan::Auto`], for expensive combines ([`policy::reduce_shares`]), the ones whose
    /// combines can cost more than the bytes they move.
    pub fn share_scan_candidate(&self) -> bool {
        self.tuning.share_scan == ShareScan::Auto && policy::reduce_shares(&self.cost)
    }

    /// The same plan in deterministic mode (`Algorithm::Auto` scans by reduce-then-scan, see
    /// [`crate::Gpu::deterministic`]).
    pub fn deterministic(mut self, on: bool) -> Plan {
        self.deterministic = on;
        self
    }

    /// How the kernels call the combine: the form an installed record names, else the
    /// tuning's or the policy's ([`policy::combine_form`]).
    pub fn combine(&self) -> CombineForm {
        self.tuned_combine.get().copied().unwrap_or(self.combine)
    }

    /// The module spec of `set`: uninstrumented, in the plan's combine form.
    pub fn spec(&self, set: KernelSet) -> KernelSpec {
        KernelSpec::new(set).with_combine(self.combine())
    }

    /// The tile shape for `purpose` (an installed autotuned shape for the staged scan, else the
    /// shape policy's, [`policy::staged_scan_shape`] for the staged scan, chosen once, with the
    /// staged kernels' chains from the combine's cost).
    /// An input map that changes the element size keeps the staged scan only where it widens
    /// ([`policy::staged_widening`]).
    pub fn shape(&self, purpose: Purpose) -> Result<TileShape> {
        if let (Purpose::Staged, Some(t)) = (purpose, self.tuned.get()) {
            return Ok(*t);
        }
        let slot = &self.shapes[purpose as usize];
        if let Some(s) = slot.get() {
            return Ok(*s);
        }
        let s = match purpose {
            Purpose::Staged => {
                policy::staged_scan_shape(self.elem_size, &self.cost, &self.limits, &self.tuning)?
            }
            _ => policy::tile_shape(self.elem_size, &self.limits, &self.tuning, purpose)?,
        };
        let s = self.fit(
            s,
            matches!(purpose, Purpose::Staged | Purpose::StagedReduce),
        );
        Ok(*slot.get_or_init(|| s))
    }

    /// The staged scan's shape for inputs of at most [`policy::SMALL_INPUT_BYTES`]
    /// ([`policy::small_staged_shape`]): `None` where the policy has none and where an input
    /// map reads inputs of another size. An autotuned shape does not replace it: the
    /// autotuner times shapes on inputs of 64 MiB and more, where a few large tiles no longer
    /// leave SMs idle.
    pub fn small_staged_shape(&self) -> Result<Option<TileShape>> {
        if self.changes_size() {
            return Ok(None);
        }
        if let Some(s) = self.small.get() {
            return Ok(*s);
        }
        let s = policy::small_staged_shape(self.elem_size, &self.cost, &self.limits, &self.tuning)?;
        Ok(*self.small.get_or_init(|| s))
    }

    /// The staged scan's shape for `n` elements: [`Plan::small_staged_shape`] for inputs of
    /// at most [`policy::SMALL_INPUT_BYTES`] where there is one, else the staged shape.
    pub fn staged_shape_for(&self, n: u64) -> Result<TileShape> {
        if n.saturating_mul(self.elem_size as u64) <= policy::SMALL_INPUT_BYTES {
            if let Some(s) = self.small_staged_shape()? {
                return Ok(s);
            }
        }
        self.shape(Purpose::Staged)
    }

    /// The tile shape of the staged row scan, whose module's operator is this plan's (the
    /// segmented lifting of an operator over `value_size`-byte values) in a launch over `rows`
    /// rows: `None` where it does not apply ([`policy::row_staged_shape`]), or where an input
    /// map reads inputs of another size (the staged tile maps in place).
    pub fn row_staged_shape(&self, value_size: usize, rows: u64) -> Result<Option<TileShape>> {
        if self.in_size.is_some_and(|size| size != value_size) {
            return Ok(None);
        }
        policy::row_staged_shape(value_size, self.elem_size, rows, &self.limits, &self.tuning)
    }

    /// [`Plan::row_staged_shape`] for rows given by offsets ([`policy::segment_staged_shape`]).
    pub fn segment_staged_shape(&self, value_size: usize, rows: u64) -> Result<Option<TileShape>> {
        if self.in_size.is_some_and(|size| size != value_size) {
            return Ok(None);
        }
        policy::segment_staged_shape(value_size, self.elem_size, rows, &self.limits, &self.tuning)
    }

    /// Threads per block of the textbook kernels.
    pub fn textbook_block(&self) -> Result<u32> {
        policy::textbook_block(self.elem_size, &self.limits)
    }

    /// The algorithm a scan of `n` elements runs: `Auto` is reduce-then-scan in deterministic
    /// mode and for more tiles than the single-pass scan numbers, else the single-pass scan.
    pub fn resolve(&self, algorithm: Algorithm, n: u64) -> Result<Algorithm> {
        Ok(match algorithm {
            Algorithm::Auto if self.deterministic => Algorithm::Hierarchical,
            Algorithm::Auto => {
                let tile = self.shape(Purpose::SinglePass)?.tile();
                if n.div_ceil(tile) > u64::from(u32::MAX) {
                    Algorithm::Hierarchical
                } else {
                    Algorithm::SinglePass
                }
            }
            a => a,
        })
    }

    /// The module a scan of `n` elements under `algorithm` launches (its `fill` also writes
    /// the total of an empty scan). `aligned`: whether input and output start on 16 bytes,
    /// which the staged scan needs.
    pub fn scan_set(&self, algorithm: Algorithm, n: u64, aligned: bool) -> Result<KernelSet> {
        Ok(match self.resolve(algorithm, n)? {
            Algorithm::KoggeStone => KernelSet::KoggeStone {
                block: self.textbook_block()?,
            },
            Algorithm::BrentKung => KernelSet::BrentKung {
                block: self.textbook_block()?,
            },
            Algorithm::Hierarchical => KernelSet::ReduceThenScan(self.shape(Purpose::Tiles)?),
            _ => {
                let register = self.shape(Purpose::SinglePass)?;
                if n <= register.tile() {
                    // One block: the small one-tile kernel when the input fits it (less
                    // padding to fold and scan), else the one-tile kernel in the single-pass
                    // shape.
                    let one = self.shape(Purpose::OneTile)?;
                    KernelSet::OneTile(if n <= one.tile() { one } else { register })
                } else {
                    let staged = self.staged_shape_for(n)?;
                    if staged.staged && aligned {
                        KernelSet::StagedScan(staged)
                    } else {
                        KernelSet::SinglePass(register)
                    }
                }
            }
        })
    }

    /// The module a reduction of `n` elements under `algorithm` launches (for an input on 16
    /// bytes, as every device allocation is): the staged reduce, in [`Plan::reduce_shape`],
    /// where the policy takes it
    /// ([`policy::reduce_staged`]: sizes other than 4 bytes, and expensive
    /// combines; and every map that widens narrower inputs) and it applies (sm_80 and newer,
    /// an input map that keeps the element size or widens as [`policy::staged_widening`]
    /// allows), else the register-tile reduce. An unaligned input takes [`Plan::register_reduce_set`].
    pub fn reduce_set(&self, algorithm: Algorithm, n: u64) -> Result<KernelSet> {
        Ok(match algorithm {
            Algorithm::KoggeStone | Algorithm::BrentKung => KernelSet::TreeReduce {
                block: self.textbook_block()?,
            },
            _ => {
                let staged = self.reduce_shape(n)?;
                // A map that changes the size stages only where it widens (`fit`), and then
                // whatever the element's size: its inputs take a fraction of the loads.
                if staged.staged
                    && self.tuning.staged_reduce
                    && (policy::reduce_staged(self.elem_size, &self.cost) || self.changes_size())
                {
                    KernelSet::StagedReduce(staged)
                } else {
                    self.register_reduce_set()?
                }
            }
        })
    }

    /// The staged reduce's shape for `n` elements ([`policy::reduce_shape`]: with the TMA, the
    /// linear layout for large inputs of cheap combines of small power-of-two sizes, else the
    /// shape of
    /// [`Purpose::StagedReduce`]), with its chains; for small inputs, the shorter runs of
    /// [`policy::small_reduce_shape`] where it has them; from [`MIN_TUNING_BYTES`] on, in the
    /// autotuned tile where one is installed ([`Plan::install_reduce`]). Where an input map
    /// changes the element size, the swizzled shape of [`policy::staged_reduce_shape`] at every
    /// size, staged where the map widens ([`policy::staged_widening`]), without the TMA.
    pub fn reduce_shape(&self, n: u64) -> Result<TileShape> {
        let bytes = n.saturating_mul(self.elem_size as u64);
        let (size, cost, limits, tuning) = (self.elem_size, &self.cost, &self.limits, &self.tuning);
        if self.changes_size() {
            return Ok(self.fit(policy::staged_reduce_shape(size, limits, tuning)?, true));
        }
        if let Some(choice) = self.tuned_reduce().filter(|_| bytes >= MIN_TUNING_BYTES) {
            if let Some(s) = autotune::reduce::with_choice(size, cost, limits, tuning, choice) {
                return Ok(self.fit(s, true));
            }
        }
        if let Some(s) = policy::small_reduce_shape(size, cost, bytes, limits, tuning)? {
            return Ok(self.fit(s, true));
        }
        if !policy::reduce_linear(size, cost, bytes, limits, tuning) {
            return self.shape(Purpose::StagedReduce);
        }
        Ok(self.fit(policy::linear_reduce_shape(size, limits, tuning)?, true))
    }

    /// `s` as this plan runs it: where `chained`, the staged kernels' chains from the
    /// combine's cost; where an input map changes the element size, the staged forms only
    /// where they widen narrower inputs ([`policy::staged_widening`]), by `cp.async`.
    fn fit(&self, mut s: TileShape, chained: bool) -> TileShape {
        let widening = self.in_size.filter(|&size| size != self.elem_size);
        if widening.is_some() {
            s.tma = false;
        }
        if chained && s.staged {
            s.chains = policy::chains(&self.cost, &self.tuning, &s, self.elem_size);
        }
        if let Some(size) = widening {
            s.staged = policy::staged_widening(size, self.elem_size, &s);
        }
        s
    }

    /// Whether an input map changes the element size: the staged scan then runs only where it
    /// widens, in the policy's shape, which autotuning leaves alone.
    pub fn changes_size(&self) -> bool {
        self.in_size.is_some_and(|size| size != self.elem_size)
    }

    /// Whether the staged reduce runs its share form ([`policy::shares`]) on inputs large
    /// enough: the tuning allows it and the combine is expensive ([`policy::reduce_shares`]).
    /// The module holds the form only in the tensor form of the swizzled layout.
    pub fn reduce_shares(&self) -> bool {
        self.tuning.share_reduce && policy::reduce_shares(&self.cost)
    }

    /// The register-tile reduce, which takes any input.
    pub fn register_reduce_set(&self) -> Result<KernelSet> {
        Ok(KernelSet::TiledReduce(self.shape(Purpose::Tiles)?))
    }

    /// Every module scans and reductions of any size under `algorithm` may load, the
    /// costliest to compile first (each module is compiled on a thread of its own, so the
    /// longest one bounds `prepare`: the look-back scans keep their one-tile form out).
    pub fn sets(&self, algorithm: Algorithm) -> Result<Vec<KernelSet>> {
        let tb = || self.textbook_block();
        let tiles = || self.shape(Purpose::Tiles);
        Ok(match algorithm {
            Algorithm::KoggeStone => vec![
                KernelSet::KoggeStone { block: tb()? },
                KernelSet::TreeReduce { block: tb()? },
            ],
            Algorithm::BrentKung => vec![
                KernelSet::BrentKung { block: tb()? },
                KernelSet::TreeReduce { block: tb()? },
            ],
            Algorithm::Auto if self.deterministic => {
                let mut sets = vec![KernelSet::ReduceThenScan(tiles()?)];
                sets.extend(self.reduce_sets(algorithm)?);
                sets
            }
            Algorithm::Hierarchical => {
                let mut sets = vec![KernelSet::ReduceThenScan(tiles()?)];
                sets.extend(self.reduce_sets(algorithm)?);
                sets
            }
            Algorithm::SinglePass | Algorithm::Auto => {
                let staged = self.shape(Purpose::Staged)?;
                let register = self.shape(Purpose::SinglePass)?;
                let one = self.shape(Purpose::OneTile)?;
                let mut sets = vec![KernelSet::SinglePass(register)];
                if staged.staged {
                    sets.push(KernelSet::StagedScan(staged));
                    if let Some(small) = self.small_staged_shape()?.filter(|s| *s != staged) {
                        sets.push(KernelSet::StagedScan(small));
                    }
                }
                sets.extend(self.reduce_sets(algorithm)?);
                if algorithm == Algorithm::Auto && self.share_scan() {
                    sets.extend(self.share_scan_set()?);
                }
                sets.push(KernelSet::OneTile(register));
                if one != register {
                    sets.push(KernelSet::OneTile(one));
                }
                sets
            }
        })
    }

    /// The set that scans from the end an input whose forward scan runs `set` (a scan set of
    /// [`Plan::scan_set`]): its form from the end ([`KernelSet::reversed`]), and for one tile
    /// the register-tile scan from the end in the single-pass shape (the one-tile scan has no
    /// such form). `None` for sets without one (the reductions, the textbook scans).
    pub fn from_end(&self, set: KernelSet) -> Result<Option<KernelSet>> {
        Ok(match set {
            KernelSet::OneTile(_) => Some(KernelSet::SinglePassReverse(
                self.shape(Purpose::SinglePass)?,
            )),
            set => set.reversed(),
        })
    }

    /// Every module a 1-D scan from the end of any size may load, rendered for the opposite
    /// monoid ([`crate::ops::Reversed`]), in the order of [`Plan::sets`] under
    /// [`Algorithm::Auto`] (reverse scans take the `Auto` plan whatever the scanner's
    /// algorithm): each scan set's form from the end ([`Plan::from_end`]), and, in
    /// deterministic mode, the forward reduce-then-scan module beside its form from the end
    /// (the levels of tile totals scan forwards). The reductions have no such module.
    ///
    /// ```
    /// use monoscan::codegen::KernelSet;
    /// use monoscan::tuning::{plan::Plan, DeviceLimits, Purpose, Tuning};
    /// use monoscan::{ops::Sum, Monoid};
    /// let op = Sum::<i32>::new().cuda();
    /// let plan = Plan::new(&op, DeviceLimits::for_arch(90), &Tuning::default());
    /// let sets = plan.reverse_sets()?;
    /// let staged = plan.shape(Purpose::Staged)?;
    /// let register = plan.shape(Purpose::SinglePass)?;
    /// assert!(sets.contains(&KernelSet::StagedScanReverse(staged)));
    /// assert!(sets.contains(&KernelSet::SinglePassReverse(register)));
    /// assert!(sets.iter().all(|s| s.reversed().is_none()));
    /// let deterministic = Plan::new(&op, DeviceLimits::for_arch(90), &Tuning::default())
    ///     .deterministic(true);
    /// let tiles = deterministic.shape(Purpose::Tiles)?;
    /// assert_eq!(
    ///     deterministic.reverse_sets()?,
    ///     [KernelSet::ReduceThenScanReverse(tiles), KernelSet::ReduceThenScan(tiles)]
    /// );
    /// # Ok::<(), monoscan::Error>(())
    /// ```
    pub fn reverse_sets(&self) -> Result<Vec<KernelSet>> {
        let mut sets: Vec<KernelSet> = Vec::new();
        for set in self.sets(Algorithm::Auto)? {
            let levels = matches!(set, KernelSet::ReduceThenScan(_)).then_some(set);
            for s in [self.from_end(set)?, levels].into_iter().flatten() {
                if !sets.contains(&s) {
                    sets.push(s);
                }
            }
        }
        Ok(sets)
    }

    /// The reduction modules of every input size under `algorithm`: that of small inputs, of
    /// an input of one whole tile of the staged reduce's shape, and of large ones, each once
    /// ([`Plan::reduce_shape`]).
    fn reduce_sets(&self, algorithm: Algorithm) -> Result<Vec<KernelSet>> {
        let whole_tile = self.shape(Purpose::StagedReduce)?.tile();
        let mut sets: Vec<KernelSet> = Vec::new();
        for n in [0, whole_tile, u64::MAX] {
            let set = self.reduce_set(algorithm, n)?;
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
        Ok(sets)
    }

    /// The modules a scan and a reduction of `n` elements under `algorithm` load (buffers on
    /// 16 bytes, as every device allocation is): what a first call of that size compiles.
    pub fn sets_for(&self, algorithm: Algorithm, n: u64) -> Result<Vec<KernelSet>> {
        let scan = self.scan_set(algorithm, n, true)?;
        let reduce = self.reduce_set(algorithm, n)?;
        Ok(if scan == reduce {
            vec![scan]
        } else {
            vec![scan, reduce]
        })
    }
}

#[cfg(test)]
mod tests;
