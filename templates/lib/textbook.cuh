// ---- The textbook kernels, generalised to any monoid ----
// MS_BLOCK threads per block. Kogge-Stone scans a section of MS_BLOCK elements,
// Brent-Kung a section of 2*MS_BLOCK; the tree reduction folds 2*MS_BLOCK elements per block.
// Sequence order is kept everywhere: combine(x, y) always has x before y.
#define MS_BLOCK {{ block }}
