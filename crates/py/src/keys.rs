//! Keys from Python: one key's bytes ([`key_bytes`]) and the batch path of
//! `Placement.locate_many` ([`owners_of`]).
//!
//! A key is a `str` (its UTF-8) or a `bytes` (its bytes). With the limited
//! API of CPython 3.10 and later (`PyUnicode_AsUTF8AndSize`), a `str`'s
//! UTF-8 is read in place: no copy and no temporary `bytes` object (an
//! ASCII `str` *is* its UTF-8; any other keeps its UTF-8 cached in the
//! object after the first read, as `str.encode` would not).
//!
//! How the batch works: the iterable is read [`CHUNK`] keys at a time. The
//! chunk's key objects are held (one reference each), so their UTF-8 stays
//! valid while the GIL is released for the chunk's lookups, which go
//! through the library's batch path (`Keyed::owners_into`: hashed a block
//! at a time, the block's memory reads overlapped). The chunk buffers are
//! made once per call and reused, so the cost is O(keys) with no per-key
//! allocation and no buffer of all the keys: besides the result (4 bytes a
//! key until the list is built), the memory is one chunk, about 24 KiB
//! for 4096 keys of 16 bytes or less.
//!
//! Quirks: a pending signal (Ctrl-C) is checked after every chunk, since a
//! C iterator (`itertools.repeat`) runs no bytecode and Python would never
//! see it on its own. On a placement without nodes the first chunk is
//! still read (a key of the wrong type is a `TypeError` first), then the
//! call raises `EmptyError`.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use ringwise::{AnyPlacement, Keyed, NodeId, Placement as _};

use crate::errors::empty;

/// Keys read and looked up per chunk: big enough that releasing and taking
/// back the GIL (about 0.1–0.3 µs) is under 0.1 ns a key, small enough
/// that the chunk's key views (24 bytes each) and owners stay in L1/L2.
pub const CHUNK: usize = 4096;

/// The bytes of a `str` (UTF-8) or `bytes` key: borrowed from the object
/// (a `str` with lone surrogates, which has no UTF-8, is encoded with
/// them replaced, as before). Cost: O(1) for `bytes` and ASCII `str`;
/// O(len) once for another `str` (CPython caches its UTF-8).
#[inline]
pub fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    // The usual key first: an exact `str` is one pointer comparison (the
    // subclass check below is a call into libpython under the limited
    // API) and its UTF-8 is read in place.
    if let Ok(s) = key.cast_exact::<PyString>() {
        if let Ok(text) = s.to_str() {
            return Ok(Cow::Borrowed(text.as_bytes()));
        }
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(match s.to_cow()? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        });
    }
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "a key must be str or bytes, not {}",
        key.get_type().name()?
    )))
}

/// The owner of every key of the iterable `keys`, in order, into `ids`
/// (cleared first). Cost: O(keys) lookups through `Keyed::owners_into`,
/// the GIL released for each chunk's; one reference taken and dropped per
/// key; no allocation per key (see the module doc for the memory).
///
/// Errors: `TypeError` for a key that is not `str`/`bytes` (or an
/// iterable that is not one), `EmptyError` when there is a key and no
/// node, whatever the iterator raises, and `KeyboardInterrupt` between
/// chunks.
pub fn owners_of(
    keyed: &Keyed<AnyPlacement>,
    keys: &Bound<'_, PyAny>,
    ids: &mut Vec<NodeId>,
) -> PyResult<()> {
    let py = keys.py();
    ids.clear();
    // A hint only: a generator has no len (the error is dropped here).
    if let Ok(n) = keys.len() {
        ids.reserve(n);
    }
    let mut iter = keys.try_iter()?;
    let mut held: Vec<Bound<'_, PyAny>> = Vec::with_capacity(CHUNK);
    // Emptied between chunks, so it can be typed as borrowing nothing.
    let mut spare: Vec<Cow<'static, [u8]>> = Vec::with_capacity(CHUNK);
    let mut owners: Vec<NodeId> = Vec::with_capacity(CHUNK);
    loop {
        held.clear();
        for key in iter.by_ref().take(CHUNK) {
            held.push(key?);
        }
        if held.is_empty() {
            return Ok(());
        }
        // `views` borrows from `held`; it is emptied before `held` changes.
        let mut views = recycle(std::mem::take(&mut spare));
        for key in &held {
            views.push(key_bytes(key)?);
        }
        if keyed.placement().is_empty() {
            return Err(empty());
        }
        py.detach(|| keyed.owners_into(&views, &mut owners));
        ids.extend_from_slice(&owners);
        let full = held.len() == CHUNK;
        views.clear();
        spare = recycle(views);
        py.check_signals()?;
        if !full {
            return Ok(());
        }
    }
}

/// An empty vector's allocation under another lifetime: the chunk's key
/// views borrow from that chunk's keys, so the buffer cannot outlive them
/// typed as it is, but emptied it holds no borrow. `into_iter().collect()`
/// of an empty `Vec` into the same element layout reuses the allocation
/// (std's in-place collect), so no allocation is made per chunk.
fn recycle<'a, 'b>(empty: Vec<Cow<'a, [u8]>>) -> Vec<Cow<'b, [u8]>> {
    debug_assert!(empty.is_empty());
    empty.into_iter().map(|_| Cow::Borrowed(&[][..])).collect()
}
