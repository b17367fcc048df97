//! Solving a ribbon's equations in windows of slots, so that the working memory beside the
//! result is a window's rows and the few equations that cross window boundaries.
//!
//! **Banding** inserts the keys' equations in the order of their sorted hashes (so their
//! start slots ascend): an equation meeting a row at its first slot XORs it away and moves
//! on to its next set bit, always upwards, until it finds an empty slot (its pivot) or
//! vanishes (consistent when its right-hand side vanishes too). **Back substitution** then
//! needs the last slot first. Both run here over windows of [`WINDOW_SLOTS`] slots:
//!
//! - **Phase A**, windows from the first: the window's rows start empty; the equations
//!   carried in from the window below are inserted first (in the order they left it), then
//!   the keys starting in the window; an equation moving past the window's top is carried
//!   to the next. The equations carried into each window are saved (a few dozen). An
//!   inconsistent equation ends the solve (the caller retries), or, when the caller keeps
//!   such keys aside (encoding 3's bumping), its key's hash is listed and it is left out.
//! - **Phase B**, windows from the last: the window's rows are rebuilt by replaying its
//!   saved carried-in equations and its keys in the same order (equations leaving it are
//!   dropped: Phase A took them up; an inconsistent one vanishes again, as in phase A),
//!   then the window's slots are back-substituted, last
//!   first, from the solution bits of the 127 slots above (the window above, done before).
//!
//! Every slot receives the same equations in the same order as one pass over all keys
//! would give it (each key's path only climbs, and windows are replayed whole), so the rows,
//! their pivots and the solution are those of the unwindowed solve, bit for bit.
//!
//! What the system asks is the caller's: the right-hand side of each key's equation and the
//! value of a slot no equation has its pivot in ([`System`]).

use super::ribbon::{equation, mask, parity, Equation, Ribbon, COEFF_BITS, MAX_COLUMNS};
use super::BuildError;
use crate::memory::OutOfMemory;

/// Slots per window (a multiple of [`COEFF_BITS`]): the rows of one (20 bytes a slot,
/// 320 KiB) stay in a core's L2 cache (measured: 2^13 to 2^16 solve at the same speed).
pub const WINDOW_SLOTS: u64 = 1 << 14;

/// The right-hand sides of a system of ribbon equations and the values of its free slots.
pub(crate) trait System {
    /// The right-hand side of the equation of the key hashed to `h` (its equation `e`),
    /// `columns` bits wide.
    fn rhs(&self, h: u64, e: &Equation, columns: u32) -> u32;
    /// The value of slot `slot`, which no equation has its pivot in, `columns` bits wide.
    fn free(&self, slot: u64, columns: u32) -> u32;
}

/// Encoding 2's system: each key's equation gives its fingerprint; free slots hold 0.
pub(crate) struct Fingerprints;

impl System for Fingerprints {
    #[inline]
    fn rhs(&self, _h: u64, e: &Equation, columns: u32) -> u32 {
        e.fingerprint & mask(columns)
    }

    #[inline]
    fn free(&self, _slot: u64, _columns: u32) -> u32 {
        0
    }
}

/// The working memory of a solve of `slots` slots besides the result, in bytes: a window's
/// rows, and the equations carried across window boundaries, counted at [`CARRIED`] a
/// boundary.
pub fn working_bytes(slots: u64) -> u64 {
    let window = slots.min(WINDOW_SLOTS);
    let boundaries = slots.div_ceil(WINDOW_SLOTS);
    let per_boundary = CARRIED * std::mem::size_of::<Carried>() as u64 + 16;
    window * ROW_BYTES + boundaries * per_boundary
}

/// Equations carried across a window boundary, counted for the working memory (measured at
/// 1M items: 12 on average, 53 at most).
const CARRIED: u64 = 64;

/// Bytes of a slot's row: coefficients and right-hand side.
const ROW_BYTES: u64 = 16 + 4;

/// An equation moving into a window from below: its slot (below 2^32: a filter has at most
/// [`super::MAX_ITEMS`] keys), row and right-hand side, and its key's hash (listed if the
/// equation turns out inconsistent). 32 bytes.
#[derive(Debug, Clone, Copy)]
struct Carried {
    coeff: u128,
    h: u64,
    at: u32,
    rhs: u32,
}

/// The rows of one window: slots `lo .. lo + coeffs.len()`.
struct Window {
    lo: u64,
    coeffs: Vec<u128>,
    rhs: Vec<u32>,
}

impl Window {
    fn new(len: u64) -> Result<Window, OutOfMemory> {
        Ok(Window {
            lo: 0,
            coeffs: zeroed(len)?,
            rhs: zeroed(len)?,
        })
    }

    /// Empties the rows and places the window at `lo`, `len` slots long.
    fn reset(&mut self, lo: u64, len: u64) {
        self.lo = lo;
        let len = len as usize;
        self.coeffs.clear();
        self.coeffs.resize(len, 0);
        self.rhs.clear();
        self.rhs.resize(len, 0);
    }

    /// Inserts the equation `c · S[at ..] = f` (`c` odd): `false` when it vanishes with a
    /// right-hand side left (the system is inconsistent). An equation leaving the window is
    /// pushed on `out` (dropped without one).
    #[inline]
    fn insert(
        &mut self,
        h: u64,
        mut at: u64,
        mut c: u128,
        mut f: u32,
        out: Option<&mut Vec<Carried>>,
    ) -> Result<bool, OutOfMemory> {
        loop {
            let i = (at - self.lo) as usize;
            let Some(&existing) = self.coeffs.get(i) else {
                if let Some(out) = out {
                    out.try_reserve(1).map_err(|_| OutOfMemory)?;
                    out.push(Carried {
                        coeff: c,
                        h,
                        at: at as u32,
                        rhs: f,
                    });
                }
                return Ok(true);
            };
            if existing == 0 {
                self.coeffs[i] = c;
                self.rhs[i] = f;
                return Ok(true);
            }
            c ^= existing;
            f ^= self.rhs[i];
            if c == 0 {
                return Ok(f == 0);
            }
            let shift = c.trailing_zeros();
            at += u64::from(shift);
            c >>= shift;
        }
    }
}

/// The solution of the sorted, distinct hashes' equations under `system`, written into
/// `data` (zeroed, the layout's length for `r`; its capacity is the caller's), or `None` when
/// two are inconsistent (the caller retries with another seed). With `bumped`, a key whose
/// equation is inconsistent with those before it is left out instead and its hash listed
/// there (ascending): the solution is then always found.
pub(crate) fn solve<S: System>(
    hashes: &[u64],
    layout: &Ribbon,
    r: u32,
    data: Vec<u8>,
    system: &S,
    bumped: Option<&mut Vec<u64>>,
) -> Result<Option<Vec<u8>>, BuildError> {
    solve_in(hashes, layout, r, data, system, WINDOW_SLOTS, bumped)
}

/// [`solve`] in windows of `window_slots` slots (a multiple of [`COEFF_BITS`]).
pub(super) fn solve_in<S: System>(
    hashes: &[u64],
    layout: &Ribbon,
    r: u32,
    mut data: Vec<u8>,
    system: &S,
    window_slots: u64,
    mut bumped: Option<&mut Vec<u64>>,
) -> Result<Option<Vec<u8>>, BuildError> {
    debug_assert!(window_slots > 0 && window_slots.is_multiple_of(COEFF_BITS));
    let slots = layout.slots();
    let starts = layout.starts();
    let windows = slots.div_ceil(window_slots);
    let bounds = |w: u64| (w * window_slots, ((w + 1) * window_slots).min(slots));
    let mut window = Window::new(slots.min(window_slots))?;
    let key = |h: u64| {
        let e = equation(h, starts);
        let columns = layout.columns(e.start / COEFF_BITS, r);
        (e.start, e.coeff, system.rhs(h, &e, columns))
    };
    let mut saved = Saved {
        carried: Vec::new(),
        first_carried: reserved(windows + 1)?,
        first_key: reserved(windows + 1)?,
    };
    let (mut carried, mut leaving) = (Vec::new(), Vec::new());
    // The next key to insert.
    let mut k = 0usize;
    for w in 0..windows {
        let (lo, hi) = bounds(w);
        window.reset(lo, hi - lo);
        saved.first_key.push(k);
        saved.first_carried.push(saved.carried.len());
        saved
            .carried
            .try_reserve(carried.len())
            .map_err(|_| OutOfMemory)?;
        saved.carried.extend_from_slice(&carried);
        for c in carried.drain(..) {
            let Carried { coeff, h, at, rhs } = c;
            let at = u64::from(at);
            if !window.insert(h, at, coeff, rhs, Some(&mut leaving))? && !bump(&mut bumped, h)? {
                return Ok(None);
            }
        }
        while let Some(&h) = hashes.get(k) {
            let (start, coeff, rhs) = key(h);
            if start >= hi {
                break;
            }
            if !window.insert(h, start, coeff, rhs, Some(&mut leaving))? && !bump(&mut bumped, h)? {
                return Ok(None);
            }
            k += 1;
        }
        std::mem::swap(&mut carried, &mut leaving);
    }
    debug_assert!(carried.is_empty() && k == hashes.len());
    saved.first_key.push(k);
    saved.first_carried.push(saved.carried.len());
    drop((carried, leaving));
    // An equation carried across a window is found inconsistent after keys of higher hash
    // in the window it left.
    if let Some(list) = bumped {
        list.sort_unstable();
    }

    // Per column, the solution bits of the 127 slots after the current one (bit 0: the
    // next slot).
    let mut after = [0u128; MAX_COLUMNS as usize + 1];
    for w in (0..windows).rev() {
        let (lo, hi) = bounds(w);
        // The last window's rows are still those phase A left.
        if w + 1 < windows {
            window.reset(lo, hi - lo);
            saved.replay(w as usize, &mut window, hashes, &key)?;
        }
        for b in (lo / COEFF_BITS..hi / COEFF_BITS).rev() {
            substitute(&window, layout, r, b, system, &mut after, &mut data);
        }
    }
    Ok(Some(data))
}

/// Lists the hash of a key whose equation is inconsistent, when the caller keeps such keys
/// (`true`); `false` when it does not (the solve fails).
fn bump(bumped: &mut Option<&mut Vec<u64>>, h: u64) -> Result<bool, OutOfMemory> {
    let Some(list) = bumped.as_deref_mut() else {
        return Ok(false);
    };
    list.try_reserve(1).map_err(|_| OutOfMemory)?;
    list.push(h);
    Ok(true)
}

/// What phase A keeps for phase B: the equations carried into each window, and where each
/// window's carried equations and keys begin (one more entry closes the last window).
struct Saved {
    carried: Vec<Carried>,
    first_carried: Vec<usize>,
    first_key: Vec<usize>,
}

impl Saved {
    /// Rebuilds the rows of window `w` (emptied) as phase A left them: its carried-in
    /// equations, then its keys, in phase A's order.
    fn replay(
        &self,
        w: usize,
        window: &mut Window,
        hashes: &[u64],
        key: &impl Fn(u64) -> (u64, u128, u32),
    ) -> Result<(), OutOfMemory> {
        // An inconsistent equation (a bumped key's) changes no row, as in phase A.
        for c in &self.carried[self.first_carried[w]..self.first_carried[w + 1]] {
            window.insert(c.h, u64::from(c.at), c.coeff, c.rhs, None)?;
        }
        for &h in &hashes[self.first_key[w]..self.first_key[w + 1]] {
            let (start, coeff, rhs) = key(h);
            window.insert(h, start, coeff, rhs, None)?;
        }
        Ok(())
    }
}

/// Back-substitutes block `b` (its rows in `window`), last slot first, and writes its
/// solution words into `data`: once the block's 128 slots are shifted in, `after` holds
/// them (bit `i`: slot `i`), each column a word as the layout stores it.
#[inline]
fn substitute<S: System>(
    window: &Window,
    layout: &Ribbon,
    r: u32,
    b: u64,
    system: &S,
    after: &mut [u128; MAX_COLUMNS as usize + 1],
    data: &mut [u8],
) {
    let columns = layout.columns(b, r) as usize;
    let first = b * COEFF_BITS;
    for i in (0..COEFF_BITS as usize).rev() {
        let slot = first + i as u64;
        let at = (slot - window.lo) as usize;
        let (row, f) = (window.coeffs[at], window.rhs[at]);
        let (c, f) = if row != 0 {
            (row >> 1, f)
        } else {
            (0, system.free(slot, columns as u32))
        };
        for (j, a) in after[..columns].iter_mut().enumerate() {
            let bit = ((f >> j) & 1) ^ parity(c & *a);
            *a = (*a << 1) | u128::from(bit);
        }
    }
    let base = layout.base(b, r);
    for (j, w) in after[..columns].iter().enumerate() {
        let at = ((base + j as u64) * 16) as usize;
        data[at..at + 16].copy_from_slice(&w.to_le_bytes());
    }
}

fn zeroed<T: bytemuck::Zeroable>(len: u64) -> Result<Vec<T>, OutOfMemory> {
    let len = usize::try_from(len).map_err(|_| OutOfMemory)?;
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| OutOfMemory)
}

fn reserved<T>(len: u64) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(usize::try_from(len).map_err(|_| OutOfMemory)?)
        .map_err(|_| OutOfMemory)?;
    Ok(v)
}
