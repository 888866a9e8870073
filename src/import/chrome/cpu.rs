//! The CPU samples inside a Chrome trace, on the trace's clock:
//! - DevTools performance traces: a `Profile` event (ph `P`, on the sampled thread, with
//!   `args.data.startTime`) and `ProfileChunk` events of the same `id` (and process) adding
//!   `args.data.cpuProfile.{nodes, samples}` and `args.data.timeDeltas`;
//! - older DevTools traces: one `CpuProfile` event whose `args.data.cpuProfile` is a whole
//!   V8 profile (see [`crate::import::cpuprofile`]);
//! - catapult/`perf`-converted traces: top-level `stackFrames` (`{id: {name, parent}}`) and
//!   `samples` (`[{tid, ts, sf, weight, name}]`; `name` is the event, `cycles:HG`).
//!
//! Damage (a chunk whose data does not parse, a sample naming an unknown frame) is counted
//! and the rest loads.

use super::events::{ArgStore, Doc, Extra, NO_NAME, Pid, Recs};
use crate::import::cpuprofile::{self, Assembly};
use crate::model::samples::{EMPTY_STACK, Samples, StackId, ThreadInfo};
use crate::model::spans::SpanSet;
use crate::model::{Names, SourceFormat, Warnings};
use serde::Deserialize;
use std::collections::HashMap;

/// `args.data` of the profile events.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    #[serde(default)]
    start_time: Option<f64>,
    #[serde(default)]
    cpu_profile: Option<cpuprofile::Profile>,
    #[serde(default)]
    time_deltas: Option<Vec<f64>>,
}

fn pid_num(p: Pid<'_>) -> Option<i64> {
    match p {
        Pid::Num(n) => Some(n),
        Pid::Text(_) => None,
    }
}

/// What [`collect`] read before the records were linked.
pub(super) struct Collected {
    samples: Samples,
    warnings: Warnings,
    /// Profiles with their `(pid, tid)`.
    profiles: Vec<(Option<i64>, Option<i64>, Assembly)>,
}

/// Reads the profile events' data and the top-level samples.
#[allow(clippy::too_many_arguments)]
pub(super) fn collect(
    file: &str,
    text: &[u8],
    recs: &Recs,
    extras: &[Extra<'_>],
    pids: &[Pid<'_>],
    names: &Names,
    store: &ArgStore,
    doc: &Doc,
) -> Collected {
    let mut out = Samples::new(file, SourceFormat::ChromeTrace);
    let mut warnings = Warnings::default();
    // Profiles by (pid, id); a `CpuProfile` event is one of its own.
    let mut profiles: Vec<(Option<i64>, Option<i64>, Assembly)> = Vec::new();
    let mut by_id: HashMap<(Pid<'_>, String), usize> = HashMap::new();
    let (mut bad, mut other) = (0u64, 0u64);
    for (k, r) in recs.iter().enumerate() {
        let name = if r.name == NO_NAME {
            ""
        } else {
            names.get(r.name)
        };
        if !matches!(name, "Profile" | "ProfileChunk" | "CpuProfile") {
            if r.ph == b'P' {
                other += 1;
            }
            continue;
        }
        let data = store.pairs[r.args.0 as usize..(r.args.0 + r.args.1) as usize]
            .iter()
            .find(|p| store.keys.get(p.key) == "data")
            .map(|p| &store.text[p.start as usize..p.start as usize + p.len as usize]);
        let data: Data = match data.map(serde_json::from_str::<Data>) {
            Some(Ok(d)) => d,
            None if name == "Profile" => Data::default(),
            Some(Err(e)) => {
                bad += 1;
                warnings.invalid_line(|| format!("event {k} ({name}): args.data: {e}"));
                continue;
            }
            None => {
                bad += 1;
                warnings.invalid_line(|| format!("event {k} ({name}): no args.data"));
                continue;
            }
        };
        let (pid, tid) = (pids[r.pid as usize], pids[r.tid as usize]);
        let key = (
            pid,
            r.id(extras)
                .map_or_else(String::new, |(id, _)| id.as_str().to_string()),
        );
        let (pid, tid) = (pid_num(pid), pid_num(tid));
        let slot = match (name, by_id.get(&key)) {
            ("CpuProfile", _) | (_, None) => {
                profiles.push((pid, tid, Assembly::default()));
                if name != "CpuProfile" {
                    by_id.insert(key, profiles.len() - 1);
                }
                profiles.len() - 1
            }
            (_, Some(&s)) => s,
        };
        let p = &mut profiles[slot];
        if name == "Profile" {
            // The sampled thread is the `Profile` event's, not the chunks' writer's.
            (p.0, p.1) = (pid, tid);
            if let Some(t) = data.start_time {
                p.2.start_us = Some(t);
            }
        }
        if let Some(cp) = data.cpu_profile {
            p.2.add(cp, data.time_deltas);
        }
    }
    if bad > 0 {
        warnings.notes.push(format!(
            "{bad} CPU profile events whose data could not be read skipped"
        ));
    }
    if other > 0 {
        warnings.notes.push(format!(
            "{other} sample events (ph 'P') other than Profile/ProfileChunk skipped"
        ));
    }
    top_level_samples(text, doc, &mut out, &mut warnings);
    Collected {
        samples: out,
        warnings,
        profiles,
    }
}

impl Collected {
    /// The samples, their threads named as `spans` names its tracks; `None` without any.
    pub(super) fn finish(self, spans: &SpanSet) -> Option<Samples> {
        let Collected {
            samples: mut out,
            mut warnings,
            profiles,
        } = self;
        for (pid, tid, mut a) in profiles {
            if a.samples.is_empty() {
                continue;
            }
            a.thread = thread_named(spans, pid, tid);
            cpuprofile::add_thread(&mut out, a, &mut warnings);
        }
        if out.is_empty() {
            return None;
        }
        out.meta_mut().warnings = warnings;
        Some(out.finish())
    }
}

/// A sampled thread named after its span track: `CrRendererMain 775 (samples)` under the
/// track's process.
fn thread_named(spans: &SpanSet, pid: Option<i64>, tid: Option<i64>) -> ThreadInfo {
    let track = (0..spans.tracks.len() as u32).find(|&t| {
        let i = spans.track_info(t);
        i.pid == pid && i.tid == tid && i.kind == crate::model::spans::TrackKind::Thread
    });
    match track {
        Some(t) => ThreadInfo {
            name: format!("{} (samples)", spans.tracks[t as usize].name),
            process: spans.track_info(t).group,
            pid,
            tid,
        },
        None => ThreadInfo {
            name: format!("thread {} (samples)", tid.unwrap_or(0)),
            process: pid.map_or_else(String::new, |p| format!("process {p}")),
            pid,
            tid,
        },
    }
}

#[derive(Deserialize)]
struct StackFrame {
    #[serde(default)]
    name: String,
    #[serde(default)]
    parent: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct TopSample {
    #[serde(default)]
    tid: Option<i64>,
    #[serde(default)]
    pid: Option<i64>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    sf: Option<serde_json::Value>,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    comm: Option<String>,
}

/// An id as JSON gives it (`7` or `"7"`) as text.
fn id_key(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Older traces' top-level `stackFrames` and `samples`.
fn top_level_samples(text: &[u8], doc: &Doc, out: &mut Samples, warnings: &mut Warnings) {
    let (Some(sr), Some(fr)) = (&doc.samples, &doc.stack_frames) else {
        return;
    };
    let frames: HashMap<String, StackFrame> = match serde_json::from_slice(&text[fr.clone()]) {
        Ok(f) => f,
        Err(e) => {
            warnings.notes.push(format!(
                "top-level stackFrames could not be read ({e}); its samples skipped"
            ));
            return;
        }
    };
    let samples: Vec<TopSample> = match serde_json::from_slice(&text[sr.clone()]) {
        Ok(s) => s,
        Err(e) => {
            warnings
                .notes
                .push(format!("top-level samples could not be read ({e})"));
            return;
        }
    };
    // Stacks of frame ids, resolved with an explicit path; cycles cut.
    let mut resolved: HashMap<String, StackId> = HashMap::new();
    let mut cycles = 0u64;
    let mut resolve = |sf: &str, out: &mut Samples| -> Option<StackId> {
        if let Some(&s) = resolved.get(sf) {
            return Some(s);
        }
        let mut path: Vec<&str> = Vec::new();
        let mut at = Some(sf.to_string());
        let mut base = EMPTY_STACK;
        let mut seen = std::collections::HashSet::new();
        while let Some(id) = at {
            if let Some(&s) = resolved.get(&id) {
                base = s;
                break;
            }
            let (key, f) = frames.get_key_value(&id)?;
            if !seen.insert(key.as_str()) {
                cycles += 1;
                break;
            }
            path.push(key.as_str());
            at = f.parent.as_ref().and_then(id_key);
        }
        for id in path.into_iter().rev() {
            let n = out.intern(&frames[id].name);
            base = out.stacks.child(base, n);
            resolved.insert(id.to_string(), base);
        }
        Some(base)
    };
    let mut unknown = 0u64;
    let mut threads: HashMap<(Option<i64>, Option<i64>), u32> = HashMap::new();
    for s in &samples {
        let Some(stack) =
            s.sf.as_ref()
                .and_then(id_key)
                .and_then(|sf| resolve(&sf, out))
        else {
            unknown += 1;
            continue;
        };
        let Some(ts) = s.ts.filter(|t| t.is_finite() && *t >= 0.0) else {
            unknown += 1;
            continue;
        };
        let thread = *threads.entry((s.pid, s.tid)).or_insert_with(|| {
            out.add_thread(ThreadInfo {
                name: format!(
                    "{} {} (samples)",
                    s.comm.as_deref().unwrap_or("thread"),
                    s.tid.unwrap_or(0)
                ),
                process: s.pid.map_or_else(String::new, |p| format!("process {p}")),
                pid: s.pid,
                tid: s.tid,
            })
        });
        let ev_name = s.name.as_deref().unwrap_or("samples");
        let base = ev_name.split(':').next().unwrap_or(ev_name);
        let values = crate::import::perf::event_values(base, s.weight.is_some());
        let event = out.event(base, values);
        let st = out.stream(thread, event);
        let w = s
            .weight
            .filter(|w| w.is_finite() && *w >= 0.0)
            .unwrap_or(1.0);
        out.push(st, (ts * 1000.0) as u64, stack, w.round().max(1.0) as u64);
    }
    if unknown > 0 {
        warnings.notes.push(format!(
            "{unknown} top-level samples without a known stack frame or time skipped"
        ));
    }
    if cycles > 0 {
        warnings
            .notes
            .push(format!("{cycles} cycles in stackFrames cut"));
    }
}
