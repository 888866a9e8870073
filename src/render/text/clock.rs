//! The label deadline of a window frame drawn while the view moves: how long its label
//! loops may go on placing labels, what it expects each text they place and the rest
//! of the frame to cost (running averages kept from earlier moving frames), and how
//! many bars it left without labels. [`super::TextLayer`] holds one and answers the
//! [`crate::view::draw::Measure`] label calls from it.

use std::time::{Duration, Instant};

/// What a text is expected to cost to draw before any frame measured it (a label of
/// ~20 glyphs on a slow machine): see [`LabelClock::note_drawing`].
const TEXT_COST_PRIOR: Duration = Duration::from_nanos(400);
/// What the rest of a timed frame is expected to take before any frame measured it.
const REST_PRIOR: Duration = Duration::from_micros(300);

pub(super) struct LabelClock {
    /// Until when this frame's label loops may place labels (`None`: no deadline).
    deadline: Option<Instant>,
    /// Bars this frame left without labels for lack of time.
    left: usize,
    /// Texts placed this frame by label loops under the deadline.
    texts: usize,
    /// What drawing a text took in recent timed frames (its items and glyph quads):
    /// counted against the deadline for every text placed, so the deadline bounds the
    /// frame's text work, not only the placing.
    text_cost: Duration,
    /// How far a frame's cost of a text strayed from `text_cost` in recent timed frames
    /// (a running mean of the absolute difference): a text is counted at the cost plus
    /// twice this ([`Self::text_bound`]), as the same labels' drawing took from 0.2 to
    /// 0.9 µs a text from frame to frame on a shared two-core machine, and a frame that
    /// met the mean's estimate exactly ran a quarter of a millisecond late.
    text_spread: Duration,
    /// What the rest of a timed frame took in recent timed frames, from its label
    /// loops' last look at the clock to its encoded commands, its texts' drawing taken
    /// off (the view's work after its labels; the renderer's rectangles, bars'
    /// uniforms, encoding): counted against the deadline too.
    rest: Duration,
    /// When this frame's label loops last looked at the clock under the deadline.
    last_check: Option<Instant>,
}

impl Default for LabelClock {
    fn default() -> Self {
        LabelClock {
            deadline: None,
            left: 0,
            texts: 0,
            text_cost: TEXT_COST_PRIOR,
            text_spread: Duration::ZERO,
            rest: REST_PRIOR,
            last_check: None,
        }
    }
}

impl LabelClock {
    /// A new frame: no deadline, nothing left, nothing placed.
    pub(super) fn begin(&mut self) {
        self.deadline = None;
        self.left = 0;
        self.texts = 0;
        self.last_check = None;
    }

    /// The frame's labels have until `budget` from now (`None`: no deadline).
    pub(super) fn limit(&mut self, budget: Option<Duration>) {
        self.deadline = budget.map(|d| Instant::now() + d);
    }

    /// The deadline is lifted (the frame's labels are placed).
    pub(super) fn end(&mut self) {
        self.deadline = None;
    }

    pub(super) fn timed(&self) -> bool {
        self.deadline.is_some()
    }

    /// Whether the time now, plus the texts placed so far (`texts` more since the last
    /// call) at the cost of a text and the rest of the frame, ends before the deadline.
    pub(super) fn in_time(&mut self, texts: usize) -> bool {
        let Some(deadline) = self.deadline else {
            return true;
        };
        self.texts = self.texts.saturating_add(texts);
        let now = Instant::now();
        self.last_check = Some(now);
        self.latest_before(deadline)
            .is_some_and(|latest| now < latest)
    }

    /// What a text placed now is counted at: its recent cost and twice that cost's
    /// recent spread, so that a frame whose texts cost more to draw than most still
    /// ends near the deadline.
    fn text_bound(&self) -> Duration {
        self.text_cost + self.text_spread * 2
    }

    /// `deadline` less the texts placed so far at [`text_bound`](Self::text_bound) and
    /// the rest of the frame: the latest instant the frame's work so far may end at;
    /// `None` when that is before any instant there is.
    fn latest_before(&self, deadline: Instant) -> Option<Instant> {
        let texts = u32::try_from(self.texts).unwrap_or(u32::MAX);
        let still_to_come = self
            .text_bound()
            .checked_mul(texts)?
            .checked_add(self.rest)?;
        deadline.checked_sub(still_to_come)
    }

    /// Until when the frame's other work between its labels and its submit (the rows'
    /// pages it fetches) may run and the frame still end by the deadline: the deadline
    /// less what the texts placed so far are counted at and the rest of the frame.
    /// `None` without a deadline; an instant already past when nothing is left.
    pub(super) fn work_until(&self) -> Option<Instant> {
        let deadline = self.deadline?;
        Some(self.latest_before(deadline).unwrap_or_else(Instant::now))
    }

    pub(super) fn leave(&mut self, n: usize) {
        self.left += n;
    }

    pub(super) fn left(&self) -> usize {
        self.left
    }

    /// The renderer took `drawing` to draw the frame's `texts` texts and was done at
    /// `done`: of a frame whose label loops looked at the clock, kept as running
    /// averages (the cost of a text over frames of many texts; the rest of the frame).
    pub(super) fn note_drawing(&mut self, drawing: Duration, texts: usize, done: Instant) {
        let Some(checked) = self.last_check.take() else {
            return;
        };
        let rest = done
            .saturating_duration_since(checked)
            .saturating_sub(drawing);
        self.rest = (self.rest * 3 + rest) / 4;
        if texts >= 64 {
            let per = drawing / texts as u32;
            let strayed = per.abs_diff(self.text_cost);
            self.text_spread = (self.text_spread * 3 + strayed) / 4;
            self.text_cost = (self.text_cost * 3 + per) / 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timed frame of `texts` texts that took `per` each to draw.
    fn frame(c: &mut LabelClock, texts: usize, per: Duration) {
        c.begin();
        c.limit(Some(Duration::from_millis(1)));
        // The label loops looked at the clock (else the frame is not noted).
        let _ = c.in_time(0);
        let done = Instant::now();
        c.note_drawing(per * texts as u32, texts, done);
        c.end();
    }

    /// The work after a frame's labels may run until the deadline less the texts placed
    /// (at their bound) and the rest of the frame; no deadline, no limit; a deadline
    /// already spent gives an instant already past, not a panic.
    #[test]
    fn work_after_the_labels_ends_before_the_deadline_by_what_is_still_to_come() {
        let us = Duration::from_micros;
        let mut c = LabelClock::default();
        c.begin();
        assert_eq!(c.work_until(), None);
        c.limit(Some(us(800)));
        let deadline = c.deadline.expect("a deadline");
        assert_eq!(c.work_until(), Some(deadline - REST_PRIOR));
        // The texts count whether or not they end in time (a slow machine may stall).
        let _ = c.in_time(100);
        let texts = TEXT_COST_PRIOR * 100;
        assert_eq!(c.work_until(), Some(deadline - REST_PRIOR - texts));
        c.rest = Duration::from_secs(1_000_000_000);
        assert!(c.work_until().expect("a limit") <= Instant::now());
        c.end();
        assert_eq!(c.work_until(), None);
    }

    /// A steady cost is counted as it is; a cost that varies from frame to frame is
    /// counted above its mean by twice its spread, and the spread fades once it is steady.
    #[test]
    fn a_text_is_counted_at_its_cost_and_twice_its_spread() {
        let ns = Duration::from_nanos;
        let mut c = LabelClock::default();
        for _ in 0..60 {
            frame(&mut c, 500, ns(300));
        }
        let steady = c.text_bound();
        assert!(steady >= ns(299) && steady <= ns(301), "{steady:?}");
        for k in 0..60 {
            frame(&mut c, 500, ns(if k % 2 == 0 { 200 } else { 600 }));
        }
        // Mean 400 ns, each frame 200 ns from it (the running mean sways with the last
        // frames): counted at ~800 ns, not ~400.
        let bound = c.text_bound();
        assert!(bound >= ns(700) && bound <= ns(950), "{bound:?}");
        assert!(c.text_cost >= ns(300) && c.text_cost <= ns(500));
        // Few texts say little about a text's cost: not counted.
        for _ in 0..60 {
            frame(&mut c, 10, ns(5000));
        }
        assert_eq!(c.text_bound(), bound);
        for _ in 0..60 {
            frame(&mut c, 500, ns(300));
        }
        let again = c.text_bound();
        assert!(again >= ns(299) && again <= ns(302), "{again:?}");
    }
}
