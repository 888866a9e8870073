//! Jaeger JSON traces → [`SpanSet`].
//!
//! Accepted shapes (all found in Jaeger's and Jaeger UI's own fixtures):
//! - the query API: `{"data": [trace, …]}` (also `total`, `limit`, `errors`);
//! - the UI's single trace export: `{"traceID", "spans", "processes"}`;
//! - an array of traces: `[{"traceID", "spans", "processes"}, …]`;
//! - Redux-wrapped: `{"data": {"spans", "processes", …}, "id", "state"}`;
//! - an array of bare UI spans, each with its own `process`;
//! - the domain model: `{"spans": [{"traceId", "spanId" (base64), "startTime"
//!   (RFC 3339), "duration" (Go duration, `"0.001s"`), "process", "tags" with `vType`}]}`.
//!
//! A span: `spanID` (hex) scoped by its trace (so ids never collide across traces),
//! `references` (`CHILD_OF` preferred, then `FOLLOWS_FROM`; the first one present in the
//! file is the parent; the older `parentSpanID` field too), `startTime` and `duration`
//! in microseconds, `operationName`, and `processID` → `processes[id].serviceName` (or
//! an inline `process`), which names the span's track. Tags, process tags (prefixed
//! `process.`) and logs become attributes. Several traces in one file all load, each
//! with its own roots. A span whose parent is not in the file becomes a root (counted).
//!
//! Google Cloud Trace's JSON has the same outline (`{"projectId", "traceId", "spans":
//! [{"spanId", "parentSpanId", "name", "startTime", "endTime" (RFC 3339), "labels"}]}`)
//! and is detected as Jaeger; it is read here too: `endTime` gives the duration,
//! `name` the name, `labels` the attributes and `projectId` the track.

use super::ImportError;
use super::chrome::scan::json_ws;
use super::trace_json::{
    EachInto, ElementsSeed, FastMap, Obj, Reporter, SpanCollector, Text, elements_into,
    first_member_array, go_duration_ns, invalid, raw_elements, raw_objects, raw_shown, raw_str,
    raw_text, raw_u64, rfc3339_ns, scalars_are, seed_is_visitor, utf8_head, utf8_text,
};
use super::trace_parts::{self, Sep};
use crate::model::spans::SpanSet;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Parses a Jaeger JSON document.
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    parse_with(file, text, None)
}

/// [`parse`], reporting how far it has got to `progress`.
pub fn parse_with(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
) -> Result<SpanSet, ImportError> {
    parse_with_threads(file, text, progress, trace_parts::threads_for(text.len()))
}

/// [`parse_with`] in parts on `threads` threads whatever the document's size (`1`: on
/// this thread, as [`parse_with`] reads documents under 4 MiB). The set, or the error,
/// is the same for any number of threads (the fuzz target holds it to that).
pub fn parse_with_threads(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
    threads: usize,
) -> Result<SpanSet, ImportError> {
    let text = utf8_text(file, text)?;
    if threads > 1
        && let Some((set, _)) = read_in_parts(file, text, progress, threads)
    {
        return Ok(set);
    }
    read_whole(file, text, progress)
}

/// [`parse_with`] on one thread: the document's outline, then each trace's spans.
fn read_whole(
    file: &str,
    text: &str,
    progress: Option<&super::Progress>,
) -> Result<SpanSet, ImportError> {
    let report = Reporter::new(progress, text);
    let mut d = serde_json::Deserializer::from_str(text);
    let outline = OutlineSeed {
        top: true,
        report: Some(&report),
    }
    .deserialize(&mut d)
    .and_then(|o| d.end().map(|()| o))
    .map_err(|e| ImportError::json(file, &e))?;
    // One span alone (a span document as Elasticsearch or a domain-model test stores
    // it): an array of one span.
    if outline.object && outline.span_id && outline.spans.is_none() && outline.data.is_none() {
        let span: &RawValue =
            serde_json::from_str(text).map_err(|e| ImportError::json(file, &e))?;
        let one = TraceRef {
            path: String::new(),
            trace_id: None,
            spans: vec![span],
            processes: None,
            project: None,
        };
        return read_traces(file, &[one], &report);
    }
    let traces = traces_of(outline).ok_or_else(|| {
        invalid(
            file,
            "top level",
            "expected Jaeger traces: {\"data\": [traces]}, {\"traceID\", \"spans\", \"processes\"}, \
             an array of traces, an array of spans, or one span",
        )
    })?;
    read_traces(file, &traces, &report)
}

/// The query API's `{"data": [traces]}` (`data` its first member) or an array of traces,
/// read in parts on `threads` threads ([`super::trace_parts`]), and how many runs of
/// traces were joined; `None` where [`parse_with`] reads it on one thread (other shapes,
/// an array of spans, anything that does not read, a trace id in two runs).
fn read_in_parts(
    file: &str,
    text: &str,
    progress: Option<&super::Progress>,
    threads: usize,
) -> Option<(SpanSet, usize)> {
    let (open, prefix) = match trace_parts::first_member_array(text, "data") {
        Some(open) => (open, "data"),
        None => (json_ws(text.as_bytes(), 0), ""),
    };
    if text.as_bytes().get(open) != Some(&b'[') {
        return None;
    }
    // A trace from the start of `rest`; its length.
    let read = |rest: &str, first: bool, out: &mut SpanCollector, _: &mut ()| {
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<TraceOutline>();
        let o = stream.next()?.ok()?.0;
        let len = stream.byte_offset();
        // A top-level array is one of spans when all its elements are: not when the first
        // one is not.
        if prefix.is_empty() && first && o.span_id {
            return None;
        }
        // (Where something does not read, the reading in one go gives the error with
        // the trace's index.)
        let t = trace_ref(o, format!("{prefix}[?]."))?;
        let processes = processes_of(t.processes);
        for (k, &span) in t.spans.iter().enumerate() {
            let path = || format!("{}[{k}]", t.path);
            read_span(file, &path, span.get(), &t, &processes, out).ok()?;
        }
        Some(len)
    };
    let starts = trace_parts::jaeger_trace_start;
    let first = json_ws(text.as_bytes(), open + 1);
    let (parts, end) =
        trace_parts::read_elements(text, first, Sep::Array, threads, progress, starts, read)?;
    let closed = if prefix.is_empty() {
        json_ws(text.as_bytes(), end) == text.len()
    } else {
        trace_parts::rest_closes(text, end, "data")
    };
    let runs = parts.len();
    let out = SpanCollector::join(parts.into_iter().map(|(c, ())| c).collect())?;
    (closed && out.len() > 0).then(|| (out.finish(), runs))
}

/// The spans of the traces complete in `head`, the start of a Jaeger document cut
/// anywhere (a preview of a big file): the query API's `{"data": [traces …` (`data` its
/// first key) or an array of traces or spans. `None` for other shapes, a head with no
/// complete trace, or one that does not read.
pub fn parse_head(file: &str, head: &[u8]) -> Option<SpanSet> {
    let text = utf8_head(head)?;
    let rest = text.trim_start();
    let outline = if rest.starts_with('[') {
        let mut elements = Vec::new();
        let _ = elements_into(rest, &mut elements);
        Outline {
            elements: Some(elements),
            ..Outline::default()
        }
    } else {
        let array = first_member_array(rest, "data")?;
        let mut traces = Vec::new();
        let _ = traces_into(&mut traces, None)
            .deserialize(&mut serde_json::Deserializer::from_str(array));
        Outline {
            object: true,
            data: Some(Data::Traces(traces)),
            ..Outline::default()
        }
    };
    let traces = traces_of(outline)?;
    read_traces(file, &traces, &Reporter::new(None, text)).ok()
}

/// The spans of `traces`.
fn read_traces(
    file: &str,
    traces: &[TraceRef<'_>],
    report: &Reporter<'_>,
) -> Result<SpanSet, ImportError> {
    let mut out = SpanCollector::default();
    for t in traces {
        let processes = processes_of(t.processes);
        for (k, &span) in t.spans.iter().enumerate() {
            let path = || format!("{}[{k}]", t.path);
            read_span(file, &path, span.get(), t, &processes, &mut out)?;
        }
        if let Some(last) = t.spans.last() {
            report.reading(last);
        }
    }
    if out.len() == 0 {
        return Err(invalid(
            file,
            "spans",
            "no spans: expected spans with spanID, startTime and duration",
        ));
    }
    Ok(out.finish())
}

/// One trace's spans (each its unparsed text) and processes, with the JSON path of its
/// `spans`.
struct TraceRef<'a> {
    path: String,
    trace_id: Option<Cow<'a, str>>,
    spans: Vec<&'a RawValue>,
    processes: Option<&'a RawValue>,
    /// Track name for spans without a process (Google Cloud Trace's `projectId`).
    project: Option<Cow<'a, str>>,
}

/// What one pass over the document keeps: at the top, its `data` (traces) or its
/// elements (a top-level array, unparsed); in a trace, its spans, ids and processes
/// (unparsed). Repeated keys: the last one, as in a `Value`.
#[derive(Default)]
struct Outline<'a> {
    /// The value was an object.
    object: bool,
    data: Option<Data<'a>>,
    /// `spans`, when it is an array.
    spans: Option<Vec<&'a RawValue>>,
    /// `traceID`, `traceId`.
    trace_id: [Option<&'a RawValue>; 2],
    processes: Option<&'a RawValue>,
    project: Option<&'a RawValue>,
    /// A top-level array's elements.
    elements: Option<Vec<&'a RawValue>>,
    /// It has a `spanID` or `spanId` (a span, not a trace).
    span_id: bool,
}

/// The top level's `data`: traces, one trace, or something else.
enum Data<'a> {
    Traces(Vec<Outline<'a>>),
    One(Box<Outline<'a>>),
    Other,
}

/// Reads an [`Outline`]: `data` and a top-level array's elements only at the top (a
/// trace's own `data` is not looked into, so nothing here nests deeper than three levels).
#[derive(Clone, Copy)]
struct OutlineSeed<'r> {
    top: bool,
    /// Where the top level reports the traces of its `data` as they end.
    report: Option<&'r Reporter<'r>>,
}

seed_is_visitor!(OutlineSeed<'_> => Outline<'de>);

impl<'de> Visitor<'de> for OutlineSeed<'_> {
    type Value = Outline<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("Jaeger traces")
    }
    scalars_are!(Outline::default());
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Outline<'de>, A::Error> {
        let elements = if self.top {
            Some(raw_elements(a)?)
        } else {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            None
        };
        Ok(Outline {
            elements,
            ..Outline::default()
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Outline<'de>, A::Error> {
        let mut o = Outline {
            object: true,
            ..Outline::default()
        };
        while let Some(Text(k)) = a.next_key()? {
            match &*k {
                "data" if self.top => o.data = Some(a.next_value_seed(DataSeed(self.report))?),
                "spans" => o.spans = a.next_value_seed(ElementsSeed)?,
                "traceID" => o.trace_id[0] = Some(a.next_value()?),
                "traceId" => o.trace_id[1] = Some(a.next_value()?),
                "processes" => o.processes = Some(a.next_value()?),
                "projectId" => o.project = Some(a.next_value()?),
                "spanID" | "spanId" => {
                    o.span_id = true;
                    a.next_value::<IgnoredAny>()?;
                }
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(o)
    }
}

/// Reads an array of traces into `out` as each one ends (see [`EachInto`]), reporting
/// each one's end to `report`.
fn traces_into<'v, 'de, 'r>(
    out: &'v mut Vec<Outline<'de>>,
    report: Option<&'r Reporter<'r>>,
) -> EachInto<'v, Outline<'de>, OutlineSeed<'r>, impl FnMut(&Outline<'de>) + 'r> {
    let seed = OutlineSeed {
        top: false,
        report: None,
    };
    EachInto::new(out, seed, move |t: &Outline<'de>| {
        if let (Some(r), Some(last)) = (report, t.spans.as_ref().and_then(|s| s.last())) {
            r.outline(last);
        }
    })
}

/// A trace's [`Outline`], as a stream of them reads it.
struct TraceOutline<'a>(Outline<'a>);

impl<'de> serde::Deserialize<'de> for TraceOutline<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        OutlineSeed {
            top: false,
            report: None,
        }
        .deserialize(d)
        .map(TraceOutline)
    }
}

/// Reads the top level's `data`.
struct DataSeed<'r>(Option<&'r Reporter<'r>>);

seed_is_visitor!(DataSeed<'_> => Data<'de>);

impl<'de> Visitor<'de> for DataSeed<'_> {
    type Value = Data<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("Jaeger traces")
    }
    scalars_are!(Data::Other);
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Data<'de>, A::Error> {
        let mut traces = Vec::new();
        traces_into(&mut traces, self.0).visit_seq(a)?;
        Ok(Data::Traces(traces))
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Data<'de>, A::Error> {
        OutlineSeed {
            top: false,
            report: None,
        }
        .visit_map(a)
        .map(|o| Data::One(Box::new(o)))
    }
}

fn trace_ref(o: Outline<'_>, path: String) -> Option<TraceRef<'_>> {
    Some(TraceRef {
        path: format!("{path}spans"),
        trace_id: o.trace_id[0]
            .or(o.trace_id[1])
            .map(RawValue::get)
            .and_then(raw_str),
        spans: o.spans?,
        processes: o.processes,
        project: o.project.map(RawValue::get).and_then(raw_str),
    })
}

fn is_span(v: &RawValue) -> bool {
    Obj::of(v.get()).is_some_and(|o| o.get("spanID").is_some() || o.get("spanId").is_some())
}

fn traces_of(doc: Outline<'_>) -> Option<Vec<TraceRef<'_>>> {
    if let Some(elements) = doc.elements {
        if elements.iter().all(|e| is_span(e)) {
            return Some(vec![TraceRef {
                path: String::new(),
                trace_id: None,
                spans: elements,
                processes: None,
                project: None,
            }]);
        }
        // An array of traces (rare next to the query API's `data`): each read again.
        return elements
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut d = serde_json::Deserializer::from_str(t.get());
                let o = OutlineSeed {
                    top: false,
                    report: None,
                }
                .deserialize(&mut d)
                .ok()?;
                trace_ref(o, format!("[{i}]."))
            })
            .collect();
    }
    if !doc.object {
        return None;
    }
    match doc.data {
        Some(Data::Traces(ts)) => ts
            .into_iter()
            .enumerate()
            .map(|(i, t)| trace_ref(t, format!("data[{i}].")))
            .collect(),
        Some(Data::One(d)) => Some(vec![trace_ref(*d, "data.".to_string())?]),
        _ => Some(vec![trace_ref(doc, String::new())?]),
    }
}

/// A process: its service's name, and its tags as span attributes (`process.` prefixed).
struct Process<'a> {
    service: Option<Cow<'a, str>>,
    tags: Vec<(String, Cow<'a, str>)>,
}

fn process_of(raw: &str) -> Option<Process<'_>> {
    let o = Obj::of(raw)?;
    let mut tags = Vec::new();
    tags_of(o.get("tags"), "process.", &mut tags);
    Some(Process {
        service: o.get("serviceName").and_then(raw_str),
        tags,
    })
}

/// A trace's processes by id, each read once for all its spans.
fn processes_of(raw: Option<&RawValue>) -> FastMap<String, Option<Process<'_>>> {
    let raw = raw.map(RawValue::get);
    let Some(o) = raw.and_then(Obj::of) else {
        return FastMap::default();
    };
    o.iter()
        .map(|(id, p)| (id.to_string(), process_of(p)))
        .collect()
}

/// Tags as `(key, value)`: UI form `{key, type, value}` or domain form `{key, vType,
/// vStr|vInt64|vFloat64|vBool|vBinary}`.
fn tags_of<'a, K: From<String> + From<Cow<'a, str>>>(
    v: Option<&'a str>,
    prefix: &str,
    out: &mut Vec<(K, Cow<'a, str>)>,
) {
    let Some(list) = v.and_then(raw_objects) else {
        return;
    };
    for t in list {
        let Some(t) = t else {
            continue;
        };
        let Some(key) = t.get("key").and_then(raw_str) else {
            continue;
        };
        let value = ["value", "vStr", "vInt64", "vFloat64", "vBool", "vBinary"]
            .iter()
            .find_map(|k| t.get(k))
            .map_or(Cow::Borrowed(""), raw_text);
        let key = if prefix.is_empty() {
            K::from(key)
        } else {
            K::from(format!("{prefix}{key}"))
        };
        out.push((key, value));
    }
}

fn read_span<'a>(
    file: &str,
    path: &dyn Fn() -> String,
    raw: &'a str,
    t: &'a TraceRef<'a>,
    processes: &'a FastMap<String, Option<Process<'a>>>,
    out: &mut SpanCollector,
) -> Result<(), ImportError> {
    let Some(span) = Obj::of(raw) else {
        return Err(invalid(
            file,
            &path(),
            format!("expected a span object, found {}", raw_shown(raw)),
        ));
    };
    let span_id = span
        .str_of(&["spanID", "spanId"])
        .ok_or_else(|| invalid(file, &path(), "expected a spanID string"))?;
    let trace_id = span.str_of(&["traceID", "traceId"]);
    let trace_id = trace_id.as_deref().or(t.trace_id.as_deref()).unwrap_or("");
    let start = span
        .get("startTime")
        .ok_or_else(|| invalid(file, &path(), "expected startTime"))?;
    let start_ns: u64 = match raw_str(start) {
        Some(s) if s.contains('T') => rfc3339_ns(&s).and_then(|n| u64::try_from(n).ok()),
        _ => raw_u64(start).and_then(|us| us.checked_mul(1000)),
    }
    .ok_or_else(|| {
        invalid(
            file,
            &path(),
            format!(
                "expected startTime in microseconds since the Unix epoch (or RFC 3339), found {}",
                raw_shown(start)
            ),
        )
    })?;
    let end = span.get("endTime").and_then(raw_str);
    let dur_ns: u64 = match span.get("duration").filter(|&d| d != "null") {
        None if end.is_some() => {
            let end_ns = end
                .as_deref()
                .and_then(rfc3339_ns)
                .ok_or_else(|| invalid(file, &path(), "expected endTime as an RFC 3339 time"))?;
            u64::try_from(end_ns).unwrap_or(0).saturating_sub(start_ns)
        }
        None => 0,
        Some(d) => match raw_str(d) {
            Some(s) if !s.bytes().all(|b| b.is_ascii_digit()) => {
                go_duration_ns(&s).and_then(|n| u64::try_from(n).ok())
            }
            _ => raw_u64(d).and_then(|us| us.checked_mul(1000)),
        }
        .filter(|&d| start_ns.checked_add(d).is_some())
        .ok_or_else(|| {
            invalid(
                file,
                &path(),
                format!(
                    "expected duration in microseconds (or a Go duration like \"1.5ms\"), found {}",
                    raw_shown(d)
                ),
            )
        })?,
    };

    // Parents: CHILD_OF first, then FOLLOWS_FROM, then the old parentSpanID field.
    let mut parents: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    if let Some(refs) = span.get("references").and_then(raw_objects) {
        let refs: Vec<Obj<'_>> = refs.into_iter().flatten().collect();
        for want in ["CHILD_OF", "FOLLOWS_FROM"] {
            for r in &refs {
                let kind = r.str_of(&["refType"]);
                if !kind
                    .as_deref()
                    .unwrap_or("CHILD_OF")
                    .eq_ignore_ascii_case(want)
                {
                    continue;
                }
                if let Some(p) = r.str_of(&["spanID", "spanId"]) {
                    let tr = r.str_of(&["traceID", "traceId"]);
                    parents.push((tr.unwrap_or(Cow::Borrowed(trace_id)), p));
                }
            }
        }
    }
    if let Some(p) = span.str_of(&["parentSpanID", "parentSpanId"])
        && !p.trim_start_matches('0').is_empty()
    {
        parents.push((Cow::Borrowed(trace_id), p));
    }

    // An inline `process` (even one that is not an object) wins over `processID`.
    let inline;
    let process = match span.get("process") {
        Some(p) => {
            inline = process_of(p);
            inline.as_ref()
        }
        None => span
            .get("processID")
            .and_then(raw_str)
            .and_then(|id| processes.get(&*id))
            .and_then(Option::as_ref),
    };
    let service = process
        .and_then(|p| p.service.as_deref())
        .or(t.project.as_deref())
        .unwrap_or("unknown service");
    let track = out.service_track(service);

    let mut attrs: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    if let Some(k) = span.get("kind").and_then(raw_str) {
        attrs.push((Cow::Borrowed("kind"), k));
    }
    tags_of(span.get("tags"), "", &mut attrs);
    if let Some(labels) = span.get("labels").and_then(Obj::of) {
        // As a `Value`'s map: by key, the last of a repeated one.
        let sorted: BTreeMap<&str, &str> = labels.iter().collect();
        attrs.extend(
            sorted
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.to_string()), raw_text(v))),
        );
    }
    if let Some(p) = process {
        attrs.extend(
            p.tags
                .iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(&**v))),
        );
    }
    if let Some(logs) = span.get("logs").and_then(raw_objects) {
        for log in logs {
            let get = |k: &str| log.as_ref().and_then(|o| o.get(k));
            let mut fields: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
            tags_of(get("fields"), "", &mut fields);
            let at = get("timestamp").map_or(Cow::Borrowed(""), raw_text);
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            attrs.push((
                Cow::Borrowed("log"),
                Cow::Owned(format!("{at} {}", body.join(" "))),
            ));
        }
    }
    let name = span.str_of(&["operationName", "name"]).unwrap_or_default();
    let parents: Vec<(&str, &str)> = parents.iter().map(|(t, s)| (&**t, &**s)).collect();
    out.push(
        trace_id, &span_id, &parents, start_ns, dur_ns, &name, track, attrs,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use crate::import::trace_parts::PARALLEL_MIN;
    use crate::import::trace_parts::tests::{PartsSeen, parts_read_as_whole, shown};
    use crate::model::NO_PARENT;
    use crate::model::spans::{SpanTree, TrackKind};

    fn name(s: &SpanSet, i: usize) -> &str {
        s.names.get(s.name[i])
    }

    fn find(s: &SpanSet, n: &str) -> usize {
        (0..s.len()).find(|&i| name(s, i) == n).unwrap()
    }

    const UI: &str = r#"{"traceID":"abc","spans":[
        {"traceID":"abc","spanID":"0000000000000001","operationName":"root","references":[],
         "startTime":1000,"duration":50,"processID":"p1",
         "tags":[{"key":"http.method","type":"string","value":"GET"},{"key":"n","type":"int64","value":3}],
         "logs":[{"timestamp":1010,"fields":[{"key":"event","type":"string","value":"hit"}]}]},
        {"traceID":"abc","spanID":"2","operationName":"child",
         "references":[{"refType":"FOLLOWS_FROM","traceID":"abc","spanID":"9"},
                       {"refType":"CHILD_OF","traceID":"abc","spanID":"1"}],
         "startTime":1010,"duration":20,"processID":"p2"}],
      "processes":{"p1":{"serviceName":"frontend","tags":[{"key":"host","type":"string","value":"h1"}]},
                   "p2":{"serviceName":"db","tags":[]}}}"#;

    #[test]
    fn ui_trace() {
        let s = parse("t.json", UI.as_bytes()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.origin_ns, 1_000_000);
        let child = find(&s, "child");
        assert_eq!(s.parent[child] as usize, find(&s, "root"));
        assert_eq!(s.dur_ns[child], 20_000);
        assert_eq!(s.tracks[s.track[child] as usize].name, "db");
        assert_eq!(s.track_info[0].kind, TrackKind::Service);
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            s.attrs.owned(find(&s, "root") as u32),
            [
                kv("http.method", "GET"),
                kv("n", "3"),
                kv("process.host", "h1"),
                kv("log", "1010 event=hit")
            ]
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    /// One span alone, as Elasticsearch stores a span document (`traceID`, an inline
    /// `process`) and as the domain model writes one (base64 `traceId`/`spanId`): a
    /// trace of that span.
    #[test]
    fn one_span_alone() {
        let es = r#"{"traceID":"0000000000000001","spanID":"0000000000000002","operationName":"op",
            "references":[{"refType":"CHILD_OF","traceID":"0000000000000001","spanID":"0000000000000003"}],
            "startTime":1485467191639875,"duration":5,"tags":[{"key":"peer.service","type":"string","value":"y"}],
            "process":{"serviceName":"service-x","tags":[]}}"#;
        let domain = r#"{"traceId":"AAAAAAAAAAAAAAAAAAAAAQ==","spanId":"AAAAAAAAAAI=","operationName":"op",
            "startTime":"2017-01-26T16:46:31.639875Z","duration":"0.000005s",
            "process":{"serviceName":"service-x"}}"#;
        for doc in [es, domain] {
            assert_eq!(
                crate::import::detect::detect(doc.as_bytes(), None),
                Ok(crate::model::SourceFormat::Jaeger)
            );
            let s = parse("one.json", doc.as_bytes()).unwrap();
            assert_eq!(s.len(), 1);
            let op = find(&s, "op");
            assert_eq!(s.tracks[s.track[op] as usize].name, "service-x");
            assert_eq!(s.dur_ns[op], 5_000);
        }
        // A span with errors in it is refused at its place.
        let bad = es.replace("\"duration\":5", "\"duration\":\"x\"");
        let e = parse("one.json", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("one.json") && e.contains("[0]"), "{e}");
    }

    /// Read in place, a document answers as its `Value` did: the last of repeated keys
    /// (a trace's `spans`, a span's name), an inline `process` that is not an object
    /// hides `processID` (no service, no process tags), and values of unexpected types
    /// are passed over (a `kind` that is a number, tags that are not objects).
    #[test]
    fn repeated_keys_and_odd_values_read_as_before() {
        let doc = r#"{"data":[{"traceID":"t","spans":[{"spanID":"9","startTime":1,"duration":1}],
            "spans":[
              {"spanID":"1","operationName":"first","operationName":"last","startTime":5,
               "duration":3,"processID":"p","kind":7,"tags":[1,{"key":"k","value":true}]},
              {"spanID":"2","operationName":"x","startTime":6,"duration":1,"processID":"p",
               "process":null,"references":[{"refType":"CHILD_OF","spanID":"1"},"junk"]}],
            "processes":{"p":{"serviceName":"svc","tags":[{"key":"h","value":"a"}]}}}]}"#;
        let s = parse("r.json", doc.as_bytes()).unwrap();
        assert_eq!(s.len(), 2);
        let (a, b) = (find(&s, "last"), find(&s, "x"));
        assert_eq!(s.tracks[s.track[a] as usize].name, "svc");
        assert_eq!(s.tracks[s.track[b] as usize].name, "unknown service");
        assert_eq!(s.parent[b] as usize, a);
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            s.attrs.owned(a as u32),
            [kv("k", "true"), kv("process.h", "a")]
        );
        assert!(s.attrs.owned(b as u32).is_empty());
    }

    /// The head of a document cut at every byte holds exactly the spans of the traces
    /// whose closing brace is before the cut (cuts inside a name's UTF-8 characters too),
    /// for the query API's `data` and for an array of spans; other shapes give none.
    #[test]
    fn a_head_cut_anywhere_reads_its_whole_traces() {
        let traces: Vec<String> = (1..=3)
            .map(|t| UI.replace("abc", &format!("t{t}")).replace("root", "rööt"))
            .collect();
        let mut doc = String::from("{ \"data\" : [");
        let mut ends = Vec::new();
        for (i, t) in traces.iter().enumerate() {
            if i > 0 {
                doc.push(',');
            }
            doc.push_str(t);
            ends.push(doc.len());
        }
        doc.push_str("],\"total\":3}");
        assert_eq!(parse("q.json", doc.as_bytes()).unwrap().len(), 6);
        for cut in 0..=doc.len() {
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            let got = parse_head("q.json", &doc.as_bytes()[..cut]).map_or(0, |s| s.len());
            assert_eq!(got, 2 * whole, "cut at byte {cut}");
        }
        let spans = r#"[{"spanID":"1","startTime":1,"duration":5,"operationName":"a"},
                        {"spanID":"2","startTime":2,"duration":1,"parentSpanID":"1"}]"#;
        let ends = [spans.find('}').unwrap() + 1, spans.rfind('}').unwrap() + 1];
        for cut in 0..=spans.len() {
            let want = ends.iter().filter(|&&e| e <= cut).count();
            let got = parse_head("s.json", &spans.as_bytes()[..cut]).map_or(0, |s| s.len());
            assert_eq!(got, want, "cut at byte {cut}");
        }
        // One trace holding every span, and `data` not the first member: no preview.
        assert!(parse_head("u.json", UI.as_bytes()).is_none());
        assert!(
            parse_head(
                "t.json",
                format!("{{\"total\":1,\"data\":[{UI}]}}").as_bytes()
            )
            .is_none()
        );
    }

    /// Reading a big document reports its progress: past the outline's third and up to
    /// the whole, never beyond it.
    #[test]
    fn a_big_document_reports_its_progress() {
        let traces: Vec<String> = (0..6000)
            .map(|t| UI.replace("abc", &format!("t{t}")))
            .collect();
        let doc = format!(r#"{{"data":[{}]}}"#, traces.join(","));
        assert!(doc.len() > 4 << 20, "{} bytes", doc.len());
        let progress = crate::import::Progress::default();
        progress.set_total(doc.len() as u64);
        let s = parse_with("p.json", doc.as_bytes(), Some(&progress)).unwrap();
        assert_eq!(s.len(), 12000);
        let done = progress.done.load(std::sync::atomic::Ordering::Relaxed) as usize;
        assert!(
            done > doc.len() * 2 / 3 && done <= doc.len(),
            "{done} of {}",
            doc.len()
        );
    }

    /// Damage is reported where it is: text after the document, bytes that are not UTF-8
    /// (at their line and column), a time out of range (as written); a string the strict
    /// reader refuses (a lone surrogate) is kept as written, not lost.
    #[test]
    fn damage_is_reported_or_kept_as_written() {
        let one = r#"{"traceID":"a","spans":[{"spanID":"1","startTime":1,"duration":1}]}"#;
        let e = parse("t.json", format!("{one}\n{one}").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("trailing"), "{e}");
        let mut bad = br#"{"traceID":"a",
"spans":[{"spanID":"1","operationName":"x"#
            .to_vec();
        bad.extend_from_slice(b"\xff\",\"startTime\":1,\"duration\":1}]}");
        let e = parse("u.json", &bad).unwrap_err().to_string();
        assert!(
            e.contains("line 2, column 42") && e.contains("UTF-8"),
            "{e}"
        );
        let e = parse(
            "r.json",
            br#"{"spans":[{"spanID":"1","startTime":1e400,"duration":1}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("found 1e400"), "{e}");
        let s = parse(
            "s.json",
            br#"{"spans":[{"spanID":"1","startTime":1,"duration":1,
                "tags":[{"key":"k","value":"a\ud800b"}]}]}"#,
        )
        .unwrap();
        assert_eq!(
            s.attrs.owned(0),
            [("k".to_string(), "a\\ud800b".to_string())]
        );
    }

    /// Documents damaged at random (bytes replaced by JSON's punctuation, quotes, escapes,
    /// digits or bytes that are not UTF-8; cut short) read or fail, whole and as heads,
    /// and never panic.
    #[test]
    fn randomly_damaged_documents_never_panic() {
        let doc = format!(r#"{{"data":[{UI},{}],"total":2}}"#, UI.replace("abc", "d"));
        let mut rng = crate::generator::Rng(21);
        let alphabet = b"{}[]:,\"\\0123456789eE.-+ nulltrue\xff\xc3u";
        for _ in 0..3000 {
            let mut bytes = doc.clone().into_bytes();
            for _ in 0..1 + rng.next() % 4 {
                let at = (rng.next() % bytes.len() as u64) as usize;
                bytes[at] = alphabet[(rng.next() % alphabet.len() as u64) as usize];
            }
            let cut = bytes.len() - (rng.next() % 64) as usize;
            let _ = parse("d.json", &bytes);
            let _ = parse_head("d.json", &bytes[..cut]);
        }
    }

    #[test]
    fn all_shapes_load() {
        let query = format!(
            r#"{{"data":[{UI},{}],"total":2}}"#,
            UI.replace("abc", "def")
        );
        let s = parse("q.json", query.as_bytes()).unwrap();
        // Same span ids in two traces: four spans, two roots, no collision.
        assert_eq!(s.len(), 4);
        assert_eq!(SpanTree::build(&s).roots.len(), 2);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);

        let array = format!("[{UI},{UI}]");
        let s = parse("a.json", array.as_bytes()).unwrap();
        assert_eq!(s.len(), 4);
        assert!(
            s.warnings.notes[0].contains("2 spans share an id"),
            "{:?}",
            s.warnings
        );

        let redux = format!(r#"{{"data":{UI},"id":"abc","state":"FETCHED_TRACE"}}"#);
        assert_eq!(parse("r.json", redux.as_bytes()).unwrap().len(), 2);

        let spans = r#"[{"traceID":"1","spanID":"a","operationName":"x","startTime":5,"duration":1,
                          "references":[{"refType":"CHILD_OF","traceID":"1","spanID":"b"}],
                          "process":{"serviceName":"svc","tags":[]}},
                         {"traceID":"1","spanID":"b","operationName":"y","startTime":4,"duration":9,
                          "process":{"serviceName":"svc","tags":[]}}]"#;
        let s = parse("s.json", spans.as_bytes()).unwrap();
        assert_eq!(s.parent[find(&s, "x")] as usize, find(&s, "y"));
        assert_eq!(s.tracks.len(), 1);
    }

    /// Issue 14, failure 7: ids `s0` … `s39` (not hex) were decoded as lenient base64 and
    /// 30 of them collided ("30 spans share an id"), so the tree was built wrong. Each span
    /// here is the child of the one before; a span that is its own parent is a cycle.
    #[test]
    fn jaeger_ids_that_are_not_hex_are_compared_as_text() {
        let spans: Vec<String> = (0..40)
            .map(|i| {
                let parent = if i == 0 {
                    String::new()
                } else {
                    format!(r#"{{"refType":"CHILD_OF","spanID":"s{}"}}"#, i - 1)
                };
                format!(
                    r#"{{"spanID":"s{i}","operationName":"op{i}","startTime":{},"duration":{},
                        "references":[{parent}]}}"#,
                    1000 + i,
                    100 - i
                )
            })
            .collect();
        let doc = format!(r#"{{"traceID":"t","spans":[{}]}}"#, spans.join(","));
        let s = parse("ids.json", doc.as_bytes()).unwrap();
        assert_eq!(s.len(), 40);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        for i in 1..40 {
            let child = find(&s, &format!("op{i}"));
            assert_eq!(s.parent[child] as usize, find(&s, &format!("op{}", i - 1)));
        }
        let t = SpanTree::build(&s);
        assert_eq!((t.roots.len(), t.cycles_broken), (1, 0));
    }

    #[test]
    fn a_span_that_is_its_own_parent_is_a_cycle() {
        let doc = r#"{"traceID":"t","spans":[
            {"spanID":"a1","operationName":"self","startTime":1000,"duration":10,
             "references":[{"refType":"CHILD_OF","spanID":"a1"}]},
            {"spanID":"b2","operationName":"orphan","startTime":1000,"duration":10,
             "references":[{"refType":"CHILD_OF","spanID":"c3"}]}]}"#;
        let s = parse("self.json", doc.as_bytes()).unwrap();
        let me = find(&s, "self");
        assert_eq!(s.parent[me] as usize, me);
        let t = SpanTree::build(&s);
        assert_eq!(t.cycles_broken, 1);
        assert_eq!(t.roots.len(), 2);
        // The orphan is counted as one, the cycle is not.
        assert_eq!(s.warnings.notes.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings.notes[0].starts_with("1 span whose parent"));
    }

    #[test]
    fn domain_model() {
        let d = r#"{"spans":[
          {"traceId":"AAAAAAAAAABSlpqJVVcaPw==","spanId":"AAAAAABkfZg=","operationName":"get",
           "startTime":"2017-01-26T16:46:31.639875-05:00","duration":"22938000ns",
           "tags":[{"key":"peer.port","vType":"INT64","vInt64":53931}],
           "process":{"serviceName":"api","tags":[]}},
          {"traceId":"AAAAAAAAAABSlpqJVVcaPw==","spanId":"AAAAAABkfZk=","operationName":"sub",
           "references":[{"refType":"CHILD_OF","traceId":"AAAAAAAAAABSlpqJVVcaPw==","spanId":"AAAAAABkfZg="}],
           "startTime":"2017-01-26T21:46:31.640Z","duration":"0.001s",
           "process":{"serviceName":"api","tags":[]}}]}"#;
        let s = parse("d.json", d.as_bytes()).unwrap();
        assert_eq!(s.origin_ns, 1_485_467_191_639_875_000);
        assert_eq!(s.dur_ns[0], 22_938_000);
        assert_eq!(s.start_ns[1], 125_000);
        assert_eq!(s.dur_ns[1], 1_000_000);
        assert_eq!(s.parent[1], 0);
        assert_eq!(s.parent[0], NO_PARENT);
        assert_eq!(
            s.attrs.owned(0)[0],
            ("peer.port".to_string(), "53931".to_string())
        );
    }

    #[test]
    fn google_cloud_trace() {
        let g = r#"{"projectId":"proj","traceId":"6ef9","spans":[
          {"spanId":"13616474711799465301","kind":"RPC_CLIENT","name":"/endpoint",
           "startTime":"2015-09-03T16:40:00.841654024Z","endTime":"2015-09-03T16:40:00.856599389Z",
           "labels":{"key1":"value1"}},
          {"spanId":"1006609995974696303","kind":"RPC_SERVER","name":"/action1",
           "startTime":"2015-09-03T16:40:00.842880028Z","endTime":"2015-09-03T16:40:00.851729538Z",
           "parentSpanId":"13616474711799465301"}]}"#;
        let s = parse("g.json", g.as_bytes()).unwrap();
        assert_eq!(s.dur_ns[0], 14_945_365);
        assert_eq!(s.parent[1], 0);
        assert_eq!(name(&s, 1), "/action1");
        assert_eq!(s.tracks[0].name, "proj");
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            s.attrs.owned(0),
            [kv("kind", "RPC_CLIENT"), kv("key1", "value1")]
        );
    }

    #[test]
    fn errors_name_the_span() {
        let e = parse(
            "t.json",
            br#"{"data":[{"traceID":"1","spans":[{"spanID":"1","startTime":1,"duration":1},
                 {"spanID":"2","startTime":"yesterday","duration":1}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("t.json: data[0].spans[1]: expected startTime"),
            "{e}"
        );
        let e = parse(
            "t.json",
            br#"{"traceID":"1","spans":[{"spanID":"1","startTime":18446744073709551,"duration":18446744073709551}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("spans[0]: expected duration"), "{e}");
        let e = parse("t.json", br#"{"traceID":"1","spans":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no spans"), "{e}");
        let e = parse("t.json", b"{\"traceID\":\"1\",\n\"spans\":[}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    /// A random query-API document (`array`: an array of traces): traces whose ids are
    /// on the trace, on its spans or both (in other case, with leading zeros), spans
    /// with CHILD_OF and FOLLOWS_FROM references to earlier spans, unknown spans or
    /// (`cross`) an earlier trace's span, `parentSpanID`, repeated span ids, tags, logs,
    /// processes with tags and inline processes; with `repeat`, a later trace takes an
    /// earlier one's id. Members and elements are spaced with JSON's whitespace.
    fn random_doc(rng: &mut Rng, traces: usize, array: bool, cross: bool, repeat: bool) -> String {
        let ws = |rng: &mut Rng| [" ", "", "\n", "\t", "\r\n  "][rng.below(5) as usize];
        // Each earlier trace's id and span ids.
        let mut earlier: Vec<(String, Vec<String>)> = Vec::new();
        let mut docs = Vec::new();
        for t in 0..traces {
            // A repeated trace refers to (and may repeat) its namesake's spans.
            let (tid, mut span_ids) = if repeat && t > 0 && rng.below(3) == 0 {
                earlier[rng.below(t as u64) as usize].clone()
            } else {
                (format!("{:x}", rng.next()), Vec::new())
            };
            let known = span_ids.len();
            // The trace's id on the trace, or else on every span.
            let on_trace = rng.below(4) > 0;
            let spelled = |rng: &mut Rng| match rng.below(3) {
                0 => tid.to_uppercase(),
                1 => format!("00{tid}"),
                _ => tid.clone(),
            };
            let mut spans: Vec<String> = Vec::new();
            for k in 0..1 + rng.below(12) {
                let id = if k as usize + known > 0 && rng.below(15) == 0 {
                    span_ids[rng.below(span_ids.len() as u64) as usize].clone()
                } else {
                    format!("{:x}", rng.below(1 << 40))
                };
                let mut members = vec![
                    format!("\"spanID\":{}\"{id}\"", ws(rng)),
                    format!("\"operationName\":\"op{}\"", rng.below(6)),
                    format!("\"startTime\":{}", 1_000 + rng.below(1000)),
                    format!("\"duration\":{}", rng.below(500)),
                ];
                if !on_trace || rng.below(3) > 0 {
                    members.push(format!("\"traceID\":\"{}\"", spelled(rng)));
                }
                let mut refs = Vec::new();
                for _ in 0..rng.below(3) {
                    let kind = ["CHILD_OF", "FOLLOWS_FROM", "child_of"][rng.below(3) as usize];
                    let (rt, rs) = match rng.below(8) {
                        0 => (spelled(rng), "feed".to_string()),
                        1 if cross && t > 0 => {
                            let (other, ids) = &earlier[rng.below(t as u64) as usize];
                            (
                                other.clone(),
                                ids[rng.below(ids.len() as u64) as usize].clone(),
                            )
                        }
                        _ if !span_ids.is_empty() => (
                            spelled(rng),
                            span_ids[rng.below(span_ids.len() as u64) as usize].clone(),
                        ),
                        _ => (spelled(rng), "1".to_string()),
                    };
                    refs.push(format!(
                        "{{\"refType\":\"{kind}\",\"traceID\":\"{rt}\",\"spanID\":\"{rs}\"}}"
                    ));
                }
                if !refs.is_empty() || rng.below(2) == 0 {
                    members.push(format!("\"references\":[{}]", refs.join(",")));
                }
                if !span_ids.is_empty() && rng.below(6) == 0 {
                    let p = &span_ids[rng.below(span_ids.len() as u64) as usize];
                    members.push(format!("\"parentSpanID\":\"{p}\""));
                }
                if rng.below(2) == 0 {
                    members.push(format!(
                        "\"tags\":[{{\"key\":\"n\",\"type\":\"int64\",\"value\":{}}},\
                         {{\"key\":\"s\",\"type\":\"string\",\"value\":\"v\\\"{}\"}}]",
                        rng.below(9),
                        rng.below(9)
                    ));
                }
                if rng.below(5) == 0 {
                    members.push(
                        "\"logs\":[{\"timestamp\":1010,\"fields\":[{\"key\":\"event\",\
                         \"value\":\"hit\"}]}]"
                            .to_string(),
                    );
                }
                match rng.below(8) {
                    0 => members.push(format!(
                        "\"process\":{{\"serviceName\":\"inline{}\"}}",
                        rng.below(3)
                    )),
                    1 => {}
                    _ => members.push(format!("\"processID\":\"p{}\"", rng.below(4))),
                }
                // Members in any order.
                for i in (1..members.len()).rev() {
                    members.swap(i, rng.below(i as u64 + 1) as usize);
                }
                span_ids.push(id);
                spans.push(format!("{{{}}}", members.join(&format!(",{}", ws(rng)))));
            }
            let processes: Vec<String> = (0..3)
                .map(|p| {
                    format!(
                        "\"p{p}\":{{\"serviceName\":\"svc{}\",\"tags\":[{{\"key\":\"host\",\
                         \"value\":\"h{p}\"}}]}}",
                        rng.below(5)
                    )
                })
                .collect();
            let mut members = vec![
                format!(
                    "\"spans\":[{}{}]",
                    ws(rng),
                    spans.join(&format!(",{}", ws(rng)))
                ),
                format!("\"processes\":{{{}}}", processes.join(",")),
            ];
            if on_trace {
                members.push(format!("\"traceID\":\"{}\"", spelled(rng)));
            }
            match rng.below(6) {
                0 => members.push("\"warnings\":null".to_string()),
                // An object that looks like a trace where a part's start is guessed.
                1 => members.push(
                    "\"warnings\":[{\"spans\":[{\"spanID\":\"9\"}]},\
                     {\"traceID\":\"1\", \"spans\" :[]}]"
                        .to_string(),
                ),
                _ => {}
            }
            let first = rng.below(members.len() as u64) as usize;
            members.swap(0, first);
            docs.push(format!("{{{}}}", members.join(",")));
            earlier.push((tid, span_ids));
        }
        let traces = docs.join(&format!(",{}", ws(rng)));
        if array {
            format!("{}[{}{traces}{}]{}", ws(rng), ws(rng), ws(rng), ws(rng))
        } else {
            let rest = [
                "",
                ",\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null",
                ", \"errors\": [{\"code\": 1, \"msg\": \"}]\"}]",
            ][rng.below(3) as usize];
            format!(
                "{}{{{}\"data\"{}:{}[{traces}]{rest}}}{}",
                ws(rng),
                ws(rng),
                ws(rng),
                ws(rng),
                ws(rng)
            )
        }
    }

    /// Documents read in parts, on 1 to 8 threads, give the set that reading them in one
    /// go gives, names, tracks, attributes, ids, parents and notes alike; they are left to
    /// that reading only where a trace id shows up in two runs of traces. Most are read
    /// in several runs (the parts' guessed starts held).
    #[test]
    fn documents_read_in_parts_read_as_in_one_go() {
        let mut rng = Rng(17);
        let mut seen = PartsSeen::default();
        for case in 0..120 {
            let (array, cross, repeat) = (case % 2 == 1, case % 5 == 3, case % 7 == 4);
            let doc = random_doc(&mut rng, 1 + case % 9, array, cross, repeat);
            let whole = parse("t.json", doc.as_bytes());
            let parts = |threads| read_in_parts("t.json", &doc, None, threads);
            parts_read_as_whole(&doc, &whole, cross || repeat, parts, &mut seen);
        }
        assert!(seen.read > 300, "{}", seen.read);
        assert!(seen.several > 150, "{}", seen.several);
    }

    /// What the reading in parts cannot take goes to the reading in one go, which gives
    /// its errors and their places; an array of spans is read in one go too.
    #[test]
    fn what_parts_do_not_take_reads_in_one_go() {
        let trace = |i: usize, id: bool| {
            let id = if id {
                format!(r#""traceID":"{i:x}","#)
            } else {
                String::new()
            };
            format!(r#"{{{id}"spans":[{{"spanID":"1","startTime":1,"duration":1}}]}}"#)
        };
        let doc = |traces: &[String]| format!("{{\"data\":[{}]}}", traces.join(",\n"));
        let traces: Vec<String> = (1..40).map(|i| trace(i, true)).collect();
        let good = doc(&traces);
        let (set, runs) = read_in_parts("t.json", &good, None, 8).unwrap();
        assert_eq!((set.len(), runs), (39, 8));
        let damaged = |k: usize, from: &str, to: &str| {
            let mut t = traces.clone();
            t[k] = t[k].replace(from, to);
            doc(&t)
        };
        let bad_span = damaged(29, r#""startTime":1,"#, r#""startTime":"x","#);
        let bad_json = damaged(33, r#""duration":1}"#, r#""duration":1,}"#);
        let mut repeated = traces.clone();
        repeated[30] = trace(3, true);
        for bad in [
            bad_span.as_str(),
            &bad_json,
            &good[..good.len() - 1],
            &format!("{}],\"data\":[]}}", &good[..good.len() - 2]),
            &format!("{good}x"),
            &good.replacen("{\"traceID\"", "[{\"traceID\"", 1),
            &format!("\u{feff}{good}"),
            &good.replacen(&traces[20], "null", 1),
            &doc(&repeated),
            r#"[{"spanID":"1","startTime":1,"duration":1},{"spanID":"2","startTime":1,"duration":1}]"#,
            r#"{"data":[]}"#,
        ] {
            assert!(read_in_parts("t.json", bad, None, 8).is_none(), "{bad}");
        }
        // Traces without ids are one trace (""), whose spans may be parents of spans in
        // any run: not read in parts, unless in one run.
        let no_ids = doc(&(1..40).map(|i| trace(i, false)).collect::<Vec<_>>());
        assert!(read_in_parts("t.json", &no_ids, None, 8).is_none());
        let (one_run, _) = read_in_parts("t.json", &no_ids, None, 1).unwrap();
        let whole = parse("t.json", no_ids.as_bytes()).unwrap();
        assert_eq!(shown(&one_run), shown(&whole));
        let e = parse("t.json", bad_span.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.json: data[29].spans[0]: expected startTime"),
            "{e}"
        );
        let e = parse("t.json", bad_json.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json: line 34, column"), "{e}");
    }

    /// A document of 4 MiB or more is read in parts: the same set as in one go, with its
    /// progress reported to the end.
    #[test]
    fn a_big_document_is_read_in_parts() {
        let mut rng = Rng(5);
        let mut doc = String::from("{\"data\":[");
        let mut k = 0;
        while doc.len() < PARALLEL_MIN + (1 << 20) {
            if k > 0 {
                doc.push(',');
            }
            let one = random_doc(&mut rng, 1, true, false, false);
            let one = one.trim();
            doc.push_str(&one[1..one.len() - 1]);
            k += 1;
        }
        doc.push_str("]}");
        let progress = crate::import::Progress::default();
        let text = doc.as_bytes();
        let parts = parse_with("t.json", text, Some(&progress)).unwrap();
        let done = progress.done.load(std::sync::atomic::Ordering::Relaxed) as usize;
        assert_eq!(done, text.len() - 1, "to the data array's end");
        let (direct, runs) = read_in_parts("t.json", &doc, None, 3).unwrap();
        assert_eq!(shown(&parts), shown(&direct));
        assert_eq!(runs, 3);
        // The reading in one go (what `parse_with` did for every size before).
        let one = read_whole("t.json", &doc, None).unwrap();
        assert_eq!(shown(&parts), shown(&one));
        assert!(parts.len() > 10_000, "{}", parts.len());
    }
}
