//! The one parallel parse driver: a big input cut into one chunk per core at record
//! boundaries, the chunks parsed on scoped threads, the results returned in input order.
//!
//! Folded stacks cut at line starts ([`next_line_start`]), perf script after blank lines,
//! Chrome traces at guessed event starts (each format says where a record may begin with
//! its `boundary` function). Joining the results (merging trees, renumbering names) is the
//! format's business; Chrome also checks that each chunk ended where the next began.

use super::ImportError;

/// Where `text` from `from` on is cut for `threads` chunks: the chunk starts (the first
/// is `from`) and, last, `text.len()`. Each cut is `boundary(text, at)` for evenly spaced
/// `at`, kept when it lies after the previous start and before the end.
pub(crate) fn cut(
    text: &[u8],
    from: usize,
    threads: usize,
    boundary: impl Fn(&[u8], usize) -> Option<usize>,
) -> Vec<usize> {
    let len = text.len().saturating_sub(from);
    let mut bounds = vec![from];
    for k in 1..threads {
        let last = *bounds.last().expect("non-empty");
        let target = (from + len * k / threads).max(last);
        match boundary(text, target) {
            Some(b) if b > last && b < text.len() => bounds.push(b),
            Some(b) if b >= text.len() => break,
            _ => {}
        }
    }
    bounds.push(text.len());
    bounds
}

/// Runs `work(j, start, end)` for every chunk `j` between consecutive `bounds`: the first
/// on this thread, each other on a thread of its own; results in chunk order. A panic in
/// a chunk is re-raised here.
pub(crate) fn run<T: Send>(
    bounds: &[usize],
    work: impl Fn(usize, usize, usize) -> T + Sync,
) -> Vec<T> {
    let work = &work;
    std::thread::scope(|scope| {
        // The first chunk on this thread, the others on threads of their own: what the
        // first chunk allocates comes from this thread's heap (an importer's first chunk
        // becomes its whole list; freed, its pages serve what this thread builds next).
        let handles: Vec<_> = bounds
            .windows(2)
            .enumerate()
            .skip(1)
            .map(|(j, w)| {
                let (a, b) = (w[0], w[1]);
                scope.spawn(move || work(j, a, b))
            })
            .collect();
        let first = bounds.get(..2).map(|w| work(0, w[0], w[1]));
        first
            .into_iter()
            .chain(handles.into_iter().map(|h| crate::par::join(h)))
            .collect()
    })
}

/// A chunk's share of the shared [`Progress`](super::Progress): the bytes it has passed,
/// added every mebibyte (chunks run in parallel, so each adds what it parsed since its
/// last report rather than setting a position).
pub(crate) struct ChunkProgress<'p> {
    progress: Option<&'p super::Progress>,
    reported: usize,
    next: usize,
}

impl<'p> ChunkProgress<'p> {
    const STEP: usize = 1 << 20;

    pub(crate) fn new(progress: Option<&'p super::Progress>) -> Self {
        ChunkProgress {
            progress,
            reported: 0,
            next: Self::STEP,
        }
    }

    /// The chunk has been parsed up to byte `at` (relative to its start).
    #[inline]
    pub(crate) fn at(&mut self, at: usize) {
        if at >= self.next {
            if let Some(p) = self.progress {
                p.advance((at - self.reported) as u64);
            }
            self.reported = at;
            self.next = at + Self::STEP;
        }
    }
}

/// Parses line-oriented `text` on up to `threads` threads: cut where `boundary` says,
/// each chunk handed to `parse` with its 1-based first line number and byte offset.
pub(crate) fn parse_in_chunks<T: Send>(
    text: &[u8],
    threads: usize,
    boundary: impl Fn(&[u8], usize) -> Option<usize>,
    parse: impl Fn(&[u8], u64, usize) -> Result<T, ImportError> + Sync,
) -> Result<Vec<T>, ImportError> {
    let bounds = cut(text, 0, threads, boundary);
    let mut first_lines = vec![1u64];
    for w in bounds.windows(2).take(bounds.len().saturating_sub(2)) {
        let n = memchr::memchr_iter(b'\n', &text[w[0]..w[1]]).count() as u64;
        first_lines.push(first_lines.last().expect("non-empty") + n);
    }
    run(&bounds, |j, a, b| parse(&text[a..b], first_lines[j], a))
        .into_iter()
        .collect()
}

/// The start of the first line that begins after `at`: just past the first newline at or
/// after `at` (where parallel chunks and preview slices of line-oriented text are cut);
/// `None` when there is none.
pub fn next_line_start(text: &[u8], at: usize) -> Option<usize> {
    memchr::memchr(b'\n', text.get(at..)?).map(|i| at + i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_at_boundaries_and_come_back_in_order() {
        let text = b"aa\nbb\ncc\ndd\nee\nff\n";
        let bounds = cut(text, 0, 3, next_line_start);
        assert_eq!(bounds, [0, 9, 15, 18]);
        let parts = run(&bounds, |j, a, b| {
            (j, String::from_utf8_lossy(&text[a..b]).to_string())
        });
        assert_eq!(parts[0], (0, "aa\nbb\ncc\n".to_string()));
        assert_eq!(parts[2], (2, "ff\n".to_string()));
        // Line numbers follow the chunks.
        let lines =
            parse_in_chunks(text, 3, next_line_start, |_, line, base| Ok((line, base))).unwrap();
        assert_eq!(lines, [(1, 0), (4, 9), (6, 15)]);
        // No boundary: one chunk; more threads than records: no empty chunks.
        assert_eq!(cut(b"abc", 0, 4, next_line_start), [0, 3]);
        assert_eq!(cut(b"a\nb\n", 0, 8, next_line_start), [0, 2, 4]);
        // From an offset (an array's first event).
        assert_eq!(cut(text, 6, 2, next_line_start), [6, 15, 18]);
    }
}
