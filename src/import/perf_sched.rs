//! The scheduler's tracepoints in `perf script` output: what a `sched:sched_switch`
//! sample says about the thread it switched out (voluntarily, blocking, or preempted),
//! and which thread a `sched:sched_wakeup` woke.
//!
//! A switch with `prev_state=R` (still runnable: preempted) counts one involuntary
//! context switch for its sample, any other state (`S`, `D`: it blocked) one voluntary
//! switch. A wakeup names its target by `pid=` (a thread id); the latest voluntary switch
//! of that thread at or before the wakeup is the blocked sample it ends, and the thread
//! whose sample the wakeup is woke it (btrace's "wakeup by").

use crate::model::samples::{CounterKind, Samples, Waker};
use std::collections::HashMap;

/// What a scheduler tracepoint's fields say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sched {
    /// `sched:sched_switch`: the thread left the CPU; `voluntary` when it blocked.
    Switch { voluntary: bool },
    /// `sched:sched_wakeup` (or `sched_waking`, `sched_wakeup_new`): thread `tid` woken.
    Wakeup { tid: i64 },
}

/// The scheduler fact of event `event` with fields `payload`, when it is one.
pub(super) fn sched_of(event: &[u8], payload: &[u8]) -> Option<Sched> {
    let field = |key: &[u8]| {
        payload
            .split(|&b| b == b' ' || b == b'\t')
            .find_map(|w| w.strip_prefix(key))
    };
    match event {
        b"sched:sched_switch" => {
            let state = field(b"prev_state=")?;
            Some(Sched::Switch {
                voluntary: !state.starts_with(b"R"),
            })
        }
        b"sched:sched_wakeup" | b"sched:sched_waking" | b"sched:sched_wakeup_new" => {
            let tid = std::str::from_utf8(field(b"pid=")?).ok()?.parse().ok()?;
            Some(Sched::Wakeup { tid })
        }
        _ => None,
    }
}

/// The counter a switch adds one to.
pub(super) fn switch_counter(voluntary: bool) -> CounterKind {
    if voluntary {
        CounterKind::VoluntarySwitches
    } else {
        CounterKind::InvoluntarySwitches
    }
}

/// A wakeup seen while parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wakeup {
    /// When (the file's clock, nanoseconds).
    pub time: u64,
    /// The waking thread (index into the parser's threads).
    pub waker: u32,
    /// The woken thread's id.
    pub tid: i64,
}

/// Gives each blocked `sched_switch` sample the thread that woke it, from `wakeups`
/// (on the file's clock; `samples` is finished, on its relative clock). Returns how many
/// blocked samples got a waker.
pub(super) fn link_wakers(samples: &mut Samples, mut wakeups: Vec<Wakeup>) -> usize {
    let Some(switch) = samples
        .events
        .iter()
        .position(|e| e.name == "sched:sched_switch")
    else {
        return 0;
    };
    wakeups.sort_by_key(|w| w.time);
    // The switch stream of each thread id.
    let mut by_tid: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, s) in samples.streams.iter().enumerate() {
        if s.event as usize == switch
            && let Some(tid) = samples.threads[s.thread as usize].tid
        {
            by_tid.entry(tid).or_default().push(i);
        }
    }
    let origin = samples.origin_ns;
    // The last sample of each stream given a waker: a blocked sample is woken once.
    let mut last: HashMap<usize, u32> = HashMap::new();
    let mut linked = 0;
    for w in wakeups {
        let Some(streams) = by_tid.get(&w.tid) else {
            continue;
        };
        let Some(at) = w.time.checked_sub(origin) else {
            continue;
        };
        // Of the thread's switch streams (one per command it ran as), the latest
        // switch at or before the wakeup.
        let best = streams
            .iter()
            .filter_map(|&si| {
                let st = &samples.streams[si];
                let j = st.time.partition_point(|&t| t <= at).checked_sub(1)?;
                Some((st.time[j], si, j))
            })
            .max();
        let Some((_, si, j)) = best else { continue };
        let st = &mut samples.streams[si];
        let blocked = st
            .counter(CounterKind::VoluntarySwitches)
            .is_some_and(|c| c[j] > 0);
        if !blocked || last.get(&si).is_some_and(|&k| k as usize >= j) {
            continue;
        }
        last.insert(si, j as u32);
        st.wakers.push(Waker {
            sample: j as u32,
            thread: w.waker,
            time: at,
        });
        linked += 1;
    }
    linked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_states_and_wakeup_targets() {
        let sw = |p: &str| sched_of(b"sched:sched_switch", p.as_bytes());
        assert_eq!(
            sw("prev_comm=bash prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x"),
            Some(Sched::Switch { voluntary: true })
        );
        assert_eq!(
            sw("prev_comm=bash prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=x"),
            Some(Sched::Switch { voluntary: false })
        );
        assert_eq!(
            sw("prev_comm=bash prev_pid=1 prev_state=D ==> next_comm=x"),
            Some(Sched::Switch { voluntary: true })
        );
        assert_eq!(sw("no state here"), None);
        assert_eq!(
            sched_of(
                b"sched:sched_wakeup",
                b"comm=python3 pid=17958 prio=120 target_cpu=001"
            ),
            Some(Sched::Wakeup { tid: 17958 })
        );
        assert_eq!(sched_of(b"sched:sched_wakeup", b"comm=x pid=zz"), None);
        assert_eq!(sched_of(b"cpu-clock", b"prev_state=S"), None);
    }
}
