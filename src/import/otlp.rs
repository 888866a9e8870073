//! OpenTelemetry OTLP/JSON traces → [`SpanSet`].
//!
//! ```json
//! {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
//!                                                  "value": {"stringValue": "api"}}]},
//!                     "scopeSpans": [{"scope": {"name": "lib"},
//!                                     "spans": [{"traceId": "5b8e…", "spanId": "eee1…",
//!                                                "parentSpanId": "", "name": "GET",
//!                                                "kind": 2,
//!                                                "startTimeUnixNano": "1544712660000000000",
//!                                                "endTimeUnixNano": "1544712661000000000",
//!                                                "attributes": [], "events": [],
//!                                                "status": {}}]}]}]}
//! ```
//!
//! Also the older `instrumentationLibrarySpans`/`instrumentationLibrary` names, Jaeger's
//! api_v3 wrapper `{"result": {"resourceSpans": …}}`, an array of such documents, and
//! JSON Lines of them (the OpenTelemetry Collector's file exporter writes a request a
//! line; a line that does not read is skipped and counted).
//! Times are Unix nanoseconds as digit strings (the protobuf JSON mapping of `fixed64`)
//! or numbers; ids are hex (base64 accepted), scoped by trace id. Each resource's
//! `service.name` names its track. Attributes (`stringValue`, `intValue`, `doubleValue`,
//! `boolValue`, `bytesValue`, `arrayValue`, `kvlistValue`), the span kind, status,
//! scope name and events become span attributes. A span ending before it starts gets
//! zero duration (counted). As in the protobuf JSON mapping, a missing field is its zero
//! value (Jaeger's api_v3 snapshot omits both times).

use super::ImportError;
use super::chrome::scan::json_ws;
use super::trace_json::{
    EachInto, ElementsSeed, Obj, Reporter, SpanCollector, Text, Top, error_within,
    first_member_array, invalid, raw_objects, raw_shown, raw_str, raw_text, raw_u64, raw_value,
    read_doc, scalars_are, seed_is_visitor, text_of, utf8_head, utf8_text,
};
use super::trace_parts::{self, Sep};
use crate::model::Warnings;
use crate::model::spans::SpanSet;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Parses an OTLP/JSON trace document.
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

/// [`parse_with`] on one thread: the document, each list of resources, each span.
fn read_whole(
    file: &str,
    text: &str,
    progress: Option<&super::Progress>,
) -> Result<SpanSet, ImportError> {
    let report = Reporter::new(progress, text);
    let (docs, skipped) = top_docs(file, text)?;
    let lists = resource_lists(file, text, docs, Some(&report))?;
    let mut set = read_resources(file, &lists, &report)?;
    set.warnings.absorb_lines(skipped);
    Ok(set)
}

/// A document's top level, each with the prefix of its JSON paths: one JSON value (an
/// object, or an array of documents), or JSON Lines: objects one after another, as the
/// OpenTelemetry Collector's file exporter writes them (an `ExportTraceServiceRequest` a
/// line), their paths prefixed with their line. A line of JSON Lines that does not read
/// (a batch cut short when the collector stopped) is skipped and counted.
#[allow(clippy::type_complexity)]
fn top_docs<'a>(
    file: &str,
    text: &'a str,
) -> Result<(Vec<(String, Option<Obj<'a>>)>, Warnings), ImportError> {
    let mut tops = Vec::new();
    let mut skipped = Warnings::default();
    let mut pos = 0;
    'lines: while pos < text.len() {
        let mut stream = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Top>();
        loop {
            let at = pos + stream.byte_offset();
            match stream.next() {
                None => break 'lines,
                Some(Ok(top)) => tops.push((at, top)),
                Some(Err(e)) => {
                    // JSON Lines once a value is followed by another object; else the
                    // one-value reading's error ("trailing characters" after it).
                    let lines = tops.len() > 1
                        || (tops.len() == 1 && text[at..].trim_start().starts_with('{'));
                    if !lines {
                        return read_doc::<Top>(file, text).map(|_| (vec![], skipped));
                    }
                    let start = text.len() - text[at..].trim_start().len();
                    let (line, _) = super::text::line_col(text.as_bytes(), start);
                    skipped.invalid_line(|| format!("line {line}: {}", super::json_message(&e)));
                    pos = memchr::memchr(b'\n', &text.as_bytes()[start..])
                        .map_or(text.len(), |k| start + k + 1);
                    continue 'lines;
                }
            }
        }
    }
    if tops.len() <= 1 && skipped.invalid_lines == 0 {
        let Some((_, top)) = tops.pop() else {
            return read_doc::<Top>(file, text).map(|_| (vec![], skipped));
        };
        let docs = match top {
            Top::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("[{i}]."), Obj::of(d.get())))
                .collect(),
            Top::Object(o) => vec![(String::new(), Some(o))],
            Top::Other => vec![(String::new(), None)],
        };
        return Ok((docs, skipped));
    }
    let docs = tops
        .into_iter()
        .map(|(at, top)| {
            let start = text.len() - text[at..].trim_start().len();
            let (line, _) = super::text::line_col(text.as_bytes(), start);
            let obj = match top {
                Top::Object(o) => Some(o),
                _ => None,
            };
            (format!("line {line}: "), obj)
        })
        .collect();
    Ok((docs, skipped))
}

/// Each document's `resourceSpans` (or `result.resourceSpans`) with its JSON path, read
/// down to each scope's spans, each span kept unparsed; reporting each resource's end.
#[allow(clippy::type_complexity)]
fn resource_lists<'a, 'r>(
    file: &str,
    text: &'a str,
    docs: Vec<(String, Option<Obj<'a>>)>,
    report: Option<&'r Reporter<'r>>,
) -> Result<Vec<(String, Vec<Resource<'a>>)>, ImportError> {
    let mut roots: Vec<(String, &str)> = Vec::new();
    for (prefix, d) in docs {
        let get = |k: &str| d.as_ref().and_then(|d| d.get(k));
        let result = get("result").and_then(Obj::of);
        let (p, rs) = match (
            get("resourceSpans"),
            result.and_then(|r| r.get("resourceSpans")),
        ) {
            (Some(rs), _) => (format!("{prefix}resourceSpans"), rs),
            (None, Some(rs)) => (format!("{prefix}result.resourceSpans"), rs),
            _ => {
                // (A JSON Lines document by its line alone.)
                let at = prefix.strip_suffix(": ").unwrap_or(&prefix);
                return Err(invalid(
                    file,
                    if at.is_empty() { "top level" } else { at },
                    "expected {\"resourceSpans\": [...]} (or {\"result\": {\"resourceSpans\": [...]}})",
                ));
            }
        };
        if !rs.starts_with('[') {
            return Err(invalid(
                file,
                &p,
                format!("expected an array, found {}", raw_shown(rs)),
            ));
        }
        roots.push((p, rs));
    }
    let mut lists = Vec::with_capacity(roots.len());
    for (p, list) in roots {
        // One pass over the list down to each scope's spans, each kept unparsed.
        let mut resources = Vec::new();
        resources_into(&mut resources, report)
            .deserialize(&mut serde_json::Deserializer::from_str(list))
            .map_err(|e| error_within(file, text, list, &e))?;
        lists.push((p, resources));
    }
    Ok(lists)
}

/// The spans of the resources complete in `head`, the start of an OTLP/JSON document cut
/// anywhere (a preview of a big file) whose first member is `resourceSpans`, or of the
/// documents whole in it (JSON Lines); `None` for other shapes, a head with no complete
/// resource, or one that does not read.
pub fn parse_head(file: &str, head: &[u8]) -> Option<SpanSet> {
    let text = utf8_head(head)?;
    let report = Reporter::new(None, text);
    // JSON Lines: the documents whole in the head, when one more starts after them.
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Top>();
    let mut docs = Vec::new();
    let mut end = 0;
    loop {
        let at = end + (text[end..].len() - text[end..].trim_start().len());
        let Some(Ok(Top::Object(o))) = stream.next() else {
            break;
        };
        end = stream.byte_offset();
        let (line, _) = super::text::line_col(text.as_bytes(), at);
        docs.push((format!("line {line}: "), Some(o)));
    }
    if !docs.is_empty() && text[end..].trim_start().starts_with('{') {
        let lists = resource_lists(file, text, docs, None).ok()?;
        return read_resources(file, &lists, &report).ok();
    }
    let list = first_member_array(text, "resourceSpans")?;
    let mut resources = Vec::new();
    let _ = resources_into(&mut resources, None)
        .deserialize(&mut serde_json::Deserializer::from_str(list));
    read_resources(file, &[("resourceSpans".to_string(), resources)], &report).ok()
}

/// The spans of lists of resources, each list with its JSON path.
fn read_resources(
    file: &str,
    lists: &[(String, Vec<Resource<'_>>)],
    report: &Reporter<'_>,
) -> Result<SpanSet, ImportError> {
    let mut out = SpanCollector::default();
    let mut backwards = 0u64;
    for (p, list) in lists {
        for (ri, rs) in list.iter().enumerate() {
            read_resource(file, p, ri, rs, &mut out, &mut backwards)?;
            if let Some(last) = rs.last_span() {
                report.reading(last);
            }
        }
    }
    finish(file, out, backwards)
}

/// The set of the spans read, with the note of those that ended before their start; the
/// error of a document without spans.
fn finish(file: &str, mut out: SpanCollector, backwards: u64) -> Result<SpanSet, ImportError> {
    if backwards > 0 {
        out.notes.push(format!(
            "{backwards} span{} ending before {} start got zero duration",
            if backwards == 1 { "" } else { "s" },
            if backwards == 1 { "its" } else { "their" }
        ));
    }
    if out.len() == 0 {
        return Err(invalid(
            file,
            "resourceSpans",
            "no spans: expected resourceSpans[].scopeSpans[].spans[] with spanId, startTimeUnixNano and endTimeUnixNano",
        ));
    }
    Ok(out.finish())
}

/// The spans of resource `ri` of the list at JSON path `p`, into `out`; counts the spans
/// that end before their start in `backwards`.
fn read_resource(
    file: &str,
    p: &str,
    ri: usize,
    rs: &Resource<'_>,
    out: &mut SpanCollector,
    backwards: &mut u64,
) -> Result<(), ImportError> {
    let mut resource_attrs = Vec::new();
    if let Some(a) = rs
        .resource
        .map(RawValue::get)
        .and_then(Obj::of)
        .and_then(|r| r.get("attributes"))
    {
        attributes(a, "", &mut resource_attrs);
    }
    let service = resource_attrs
        .iter()
        .find(|(k, _)| k == "service.name")
        .map_or("unknown_service", |(_, v)| v);
    let track = out.service_track(service);
    // Every span of the resource carries its other attributes.
    let resource_attrs: Vec<(Cow<'_, str>, Cow<'_, str>)> = resource_attrs
        .iter()
        .filter(|(k, _)| k != "service.name")
        .map(|(k, v)| (Cow::Owned(format!("resource.{k}")), v.clone()))
        .collect();
    // `scopeSpans` when present (an array or not), else the older name.
    let (scope_key, scopes) = match &rs.scope_spans {
        Some(s) => ("scopeSpans", s.as_deref()),
        None => (
            "instrumentationLibrarySpans",
            rs.library_spans.as_ref().and_then(Option::as_deref),
        ),
    };
    for (si, ss) in scopes.into_iter().flatten().enumerate() {
        let scope_name = ss
            .scope
            .map(RawValue::get)
            .and_then(Obj::of)
            .and_then(|s| s.get("name"))
            .and_then(raw_str)
            .filter(|s| !s.is_empty());
        for (k, &span) in ss.spans.iter().flatten().enumerate() {
            let path = || format!("{p}[{ri}].{scope_key}[{si}].spans[{k}]");
            read_span(
                file,
                &path,
                span.get(),
                track,
                scope_name.as_deref(),
                &resource_attrs,
                out,
                backwards,
            )?;
        }
    }
    Ok(())
}

/// Whether the document whose first member's array starts at `open` looks like JSON
/// Lines: its second line starts another `{"resourceSpans":` (the reading checks it).
fn json_lines(text: &str, open: usize) -> bool {
    let t = text.as_bytes();
    let Some(nl) = memchr::memchr(b'\n', &t[open..]).map(|k| open + k) else {
        return false;
    };
    let next = nl + (text[nl..].len() - text[nl..].trim_start().len());
    trace_parts::object_with_first_key(&t[..t.len().min(next + 64)], next, &["resourceSpans"])
        == Some(next)
}

/// `{"resourceSpans": [resource, …]}` (`resourceSpans` its first member), or JSON Lines
/// of such requests, read in parts on `threads` threads ([`super::trace_parts`]), and how
/// many runs of resources (or requests) were joined; `None` where [`parse_with`] reads it
/// on one thread (other shapes, anything that does not read, a trace id in two runs).
fn read_in_parts(
    file: &str,
    text: &str,
    progress: Option<&super::Progress>,
    threads: usize,
) -> Option<(SpanSet, usize)> {
    let open = trace_parts::first_member_array(text, "resourceSpans")?;
    // A resource from the start of `rest`; its length. (Where something does not read,
    // the reading in one go gives the error with the resource's index.)
    let read = |rest: &str, _: bool, out: &mut SpanCollector, backwards: &mut u64| {
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<ResourceOutline>();
        let rs = stream.next()?.ok()?.0;
        let len = stream.byte_offset();
        read_resource(file, "resourceSpans", usize::MAX, &rs, out, backwards).ok()?;
        Some(len)
    };
    let starts = |t: &[u8], from: usize| {
        let keys = ["resource", "scopeSpans", "instrumentationLibrarySpans"];
        trace_parts::object_with_first_key(t, from, &keys)
    };
    let lines = json_lines(text, open);
    let parts = if lines {
        // A request from the start of `rest`; its length.
        let read = |rest: &str, _: bool, out: &mut SpanCollector, backwards: &mut u64| {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Top>();
            let Top::Object(doc) = stream.next()?.ok()? else {
                return None;
            };
            let len = stream.byte_offset();
            let list = doc.get("resourceSpans").filter(|l| l.starts_with('['))?;
            let mut resources = Vec::new();
            resources_into(&mut resources, None)
                .deserialize(&mut serde_json::Deserializer::from_str(list))
                .ok()?;
            for rs in &resources {
                read_resource(file, "resourceSpans", usize::MAX, rs, out, backwards).ok()?;
            }
            Some(len)
        };
        let starts =
            |t: &[u8], from: usize| trace_parts::object_with_first_key(t, from, &["resourceSpans"]);
        let first = json_ws(text.as_bytes(), 0);
        trace_parts::read_elements(text, first, Sep::Lines, threads, progress, starts, read)?.0
    } else {
        let first = json_ws(text.as_bytes(), open + 1);
        let (parts, end) =
            trace_parts::read_elements(text, first, Sep::Array, threads, progress, starts, read)?;
        if !trace_parts::rest_closes(text, end, "resourceSpans") {
            return None;
        }
        parts
    };
    let (runs, backwards) = (parts.len(), parts.iter().map(|(_, b)| b).sum());
    let out = SpanCollector::join(parts.into_iter().map(|(c, _)| c).collect())?;
    Some((finish(file, out, backwards).ok()?, runs))
}

/// One element of `resourceSpans`, its spans unparsed. Repeated keys: the last one, as
/// in a `Value`; an element that is not an object has nothing.
#[derive(Default)]
struct Resource<'a> {
    resource: Option<&'a RawValue>,
    /// `scopeSpans` when present: its scopes, when it is an array.
    scope_spans: Option<Option<Vec<Scope<'a>>>>,
    /// `instrumentationLibrarySpans` (the older name), the same way.
    library_spans: Option<Option<Vec<Scope<'a>>>>,
}

impl<'a> Resource<'a> {
    /// Its last span (for progress reports).
    fn last_span(&self) -> Option<&'a RawValue> {
        let scopes = match &self.scope_spans {
            Some(s) => s.as_ref(),
            None => self.library_spans.as_ref().and_then(Option::as_ref),
        };
        scopes?
            .iter()
            .rev()
            .find_map(|s| s.spans.as_ref().and_then(|v| v.last().copied()))
    }
}

/// One scope's name holder (`scope`, else `instrumentationLibrary`) and spans.
#[derive(Default)]
struct Scope<'a> {
    scope: Option<&'a RawValue>,
    spans: Option<Vec<&'a RawValue>>,
}

/// Reads `resourceSpans` (an array) into `out` as each resource ends (see
/// [`EachInto`]), reporting each one's end to `report`.
fn resources_into<'v, 'de, 'r>(
    out: &'v mut Vec<Resource<'de>>,
    report: Option<&'r Reporter<'r>>,
) -> EachInto<'v, Resource<'de>, ResourceSeed, impl FnMut(&Resource<'de>) + 'r> {
    EachInto::new(out, ResourceSeed, move |r: &Resource<'de>| {
        if let (Some(report), Some(last)) = (report, r.last_span()) {
            report.outline(last);
        }
    })
}

/// A [`Resource`], as a stream of them reads it.
struct ResourceOutline<'a>(Resource<'a>);

impl<'de> serde::Deserialize<'de> for ResourceOutline<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ResourceSeed.deserialize(d).map(ResourceOutline)
    }
}

#[derive(Clone, Copy)]
struct ResourceSeed;

seed_is_visitor!(ResourceSeed => Resource<'de>);

impl<'de> Visitor<'de> for ResourceSeed {
    type Value = Resource<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("resource spans")
    }
    scalars_are!(Resource::default());
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Resource::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut r = Resource::default();
        while let Some(Text(k)) = a.next_key()? {
            match &*k {
                "resource" => r.resource = Some(a.next_value()?),
                "scopeSpans" => r.scope_spans = Some(a.next_value_seed(ScopeList)?),
                "instrumentationLibrarySpans" => {
                    r.library_spans = Some(a.next_value_seed(ScopeList)?);
                }
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(r)
    }
}

/// A list of scopes; `None` for any other value.
struct ScopeList;

seed_is_visitor!(ScopeList => Option<Vec<Scope<'de>>>);

impl<'de> Visitor<'de> for ScopeList {
    type Value = Option<Vec<Scope<'de>>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("scope spans")
    }
    scalars_are!(None);
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut v = Vec::new();
        while let Some(s) = a.next_element_seed(ScopeSeed)? {
            v.push(s);
        }
        Ok(Some(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

struct ScopeSeed;

seed_is_visitor!(ScopeSeed => Scope<'de>);

impl<'de> Visitor<'de> for ScopeSeed {
    type Value = Scope<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("scope spans")
    }
    scalars_are!(Scope::default());
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scope::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let (mut scope, mut library, mut spans) = (None, None, None);
        while let Some(Text(k)) = a.next_key()? {
            match &*k {
                "scope" => scope = Some(a.next_value()?),
                "instrumentationLibrary" => library = Some(a.next_value()?),
                "spans" => spans = a.next_value_seed(ElementsSeed)?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Scope {
            scope: scope.or(library),
            spans,
        })
    }
}

/// An OTLP `AnyValue` as text.
fn any_value(v: &Value) -> String {
    let Some(o) = v.as_object() else {
        return text_of(v);
    };
    if let Some(s) = o.get("stringValue") {
        return text_of(s);
    }
    for k in ["intValue", "doubleValue", "boolValue", "bytesValue"] {
        if let Some(x) = o.get(k) {
            return text_of(x);
        }
    }
    if let Some(a) = o.get("arrayValue") {
        let items: Vec<String> = a
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(any_value)
            .collect();
        return format!("[{}]", items.join(", "));
    }
    if let Some(kv) = o.get("kvlistValue") {
        let items: Vec<String> = kv
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.get("key").and_then(Value::as_str).unwrap_or(""),
                    e.get("value").map_or_else(String::new, any_value)
                )
            })
            .collect();
        return format!("{{{}}}", items.join(", "));
    }
    String::new()
}

/// An OTLP `AnyValue` as text, read in place for the scalar ones.
fn any_raw(raw: &str) -> Cow<'_, str> {
    let Some(o) = Obj::of(raw) else {
        return raw_text(raw);
    };
    if let Some(s) = o.get("stringValue") {
        return raw_text(s);
    }
    for k in ["intValue", "doubleValue", "boolValue", "bytesValue"] {
        if let Some(x) = o.get(k) {
            return raw_text(x);
        }
    }
    if o.get("arrayValue").is_some() || o.get("kvlistValue").is_some() {
        return Cow::Owned(any_value(&raw_value(raw)));
    }
    Cow::Borrowed("")
}

/// `[{key, value: AnyValue}]` as pairs, keys prefixed.
fn attributes<'a>(list: &'a str, prefix: &str, out: &mut Vec<(Cow<'a, str>, Cow<'a, str>)>) {
    for a in raw_objects(list).into_iter().flatten() {
        let Some(a) = a else { continue };
        if let Some(k) = a.get("key").and_then(raw_str) {
            let k = if prefix.is_empty() {
                k
            } else {
                Cow::Owned(format!("{prefix}{k}"))
            };
            out.push((k, a.get("value").map_or(Cow::Borrowed(""), any_raw)));
        }
    }
}

fn kind_name(v: &Value) -> Option<&'static str> {
    let n = match v {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => match s.trim_start_matches("SPAN_KIND_") {
            "INTERNAL" => 1,
            "SERVER" => 2,
            "CLIENT" => 3,
            "PRODUCER" => 4,
            "CONSUMER" => 5,
            _ => return None,
        },
        _ => return None,
    };
    Some(match n {
        1 => "internal",
        2 => "server",
        3 => "client",
        4 => "producer",
        5 => "consumer",
        _ => return None,
    })
}

#[allow(clippy::too_many_arguments)]
fn read_span(
    file: &str,
    path: &dyn Fn() -> String,
    raw: &str,
    track: u32,
    scope: Option<&str>,
    resource_attrs: &[(Cow<'_, str>, Cow<'_, str>)],
    out: &mut SpanCollector,
    backwards: &mut u64,
) -> Result<(), ImportError> {
    let span = Obj::of(raw);
    let get = |k: &str| span.as_ref().and_then(|s| s.get(k));
    let id = |k: &str| get(k).and_then(raw_str).unwrap_or_default();
    let span_id = id("spanId");
    if span_id.is_empty() {
        return Err(invalid(file, &path(), "expected a spanId string"));
    }
    let trace_id = id("traceId");
    let time = |k: &str| -> Result<u64, ImportError> {
        // The protobuf JSON mapping omits zero values: a missing time is 0.
        let Some(v) = get(k) else { return Ok(0) };
        raw_u64(v).ok_or_else(|| {
            invalid(
                file,
                &path(),
                format!(
                    "expected {k} as Unix nanoseconds (a digit string or an integer), found {}",
                    raw_shown(v)
                ),
            )
        })
    };
    let start_ns = time("startTimeUnixNano")?;
    let end_ns = time("endTimeUnixNano")?;
    if end_ns < start_ns {
        *backwards += 1;
    }
    let parent = id("parentSpanId");
    let parents: &[(&str, &str)] = if parent.is_empty() || parent.trim_start_matches('0').is_empty()
    {
        &[]
    } else {
        &[(&trace_id, &parent)]
    };

    let mut attrs: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    if let Some(k) = get("kind").and_then(|k| kind_name(&raw_value(k))) {
        attrs.push((Cow::Borrowed("span.kind"), Cow::Borrowed(k)));
    }
    if let Some(a) = get("attributes") {
        attributes(a, "", &mut attrs);
    }
    if let Some(st) = get("status") {
        let st = Obj::of(st);
        let sget = |k: &str| st.as_ref().and_then(|s| s.get(k));
        if let Some(c) = sget("code") {
            attrs.push((Cow::Borrowed("status.code"), raw_text(c)));
        }
        if let Some(m) = sget("message").and_then(raw_str).filter(|m| !m.is_empty()) {
            attrs.push((Cow::Borrowed("status.message"), m));
        }
    }
    if let Some(s) = scope {
        attrs.push((Cow::Borrowed("otel.scope.name"), Cow::Borrowed(s)));
    }
    for e in get("events").and_then(raw_objects).into_iter().flatten() {
        let eget = |k: &str| e.as_ref().and_then(|e| e.get(k));
        let mut ea = Vec::new();
        if let Some(a) = eget("attributes") {
            attributes(a, "", &mut ea);
        }
        let at = eget("timeUnixNano")
            .and_then(raw_u64)
            .map_or_else(String::new, |t| {
                format!("+{}ns ", t.saturating_sub(start_ns))
            });
        let body: Vec<String> = ea.iter().map(|(k, v)| format!("{k}={v}")).collect();
        attrs.push((
            Cow::Borrowed("event"),
            Cow::Owned(
                format!(
                    "{at}{} {}",
                    eget("name").and_then(raw_str).unwrap_or_default(),
                    body.join(" ")
                )
                .trim_end()
                .to_string(),
            ),
        ));
    }
    attrs.extend(
        resource_attrs
            .iter()
            .map(|(k, v)| (Cow::Borrowed(&**k), Cow::Borrowed(&**v))),
    );
    let name = get("name").and_then(raw_str).unwrap_or_default();
    out.push(
        &trace_id,
        &span_id,
        parents,
        start_ns,
        end_ns.saturating_sub(start_ns),
        &name,
        track,
        attrs,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use crate::import::trace_parts::PARALLEL_MIN;
    use crate::import::trace_parts::tests::{PartsSeen, parts_read_as_whole, shown};

    const DOC: &str = r#"{"resourceSpans":[{"resource":{"attributes":[
        {"key":"service.name","value":{"stringValue":"api"}},
        {"key":"host","value":{"stringValue":"h1"}}]},
      "scopeSpans":[{"scope":{"name":"lib"},"spans":[
        {"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","parentSpanId":"",
         "name":"GET /","kind":2,"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":1544712661000000000,
         "attributes":[{"key":"n","value":{"intValue":"42"}},
                       {"key":"l","value":{"arrayValue":{"values":[{"stringValue":"a"},{"boolValue":true}]}}},
                       {"key":"m","value":{"kvlistValue":{"values":[{"key":"x","value":{"doubleValue":1.5}}]}}}],
         "events":[{"timeUnixNano":"1544712660300000000","name":"cache miss","attributes":[]}],
         "status":{"code":2,"message":"boom"}},
        {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b175","parentSpanId":"eee19b7ec3c1b174",
         "name":"db","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"1544712660100000000","endTimeUnixNano":"1544712660000000000"}
      ]}]}]}"#;

    /// The head of a document cut at every byte holds exactly the spans of the resources
    /// whose closing brace is before the cut; a document whose first member is not
    /// `resourceSpans` gives none.
    #[test]
    fn a_head_cut_anywhere_reads_its_whole_resources() {
        let resource = &DOC[DOC.find('[').unwrap() + 1..DOC.rfind(']').unwrap()];
        let mut doc = String::from("{\"resourceSpans\":[");
        let mut ends = Vec::new();
        for i in 0..3 {
            if i > 0 {
                doc.push(',');
            }
            doc.push_str(
                &resource
                    .replace("5B8E", &format!("{i}B8E"))
                    .replace("5b8e", &format!("{i}b8e")),
            );
            ends.push(doc.len());
        }
        doc.push_str("]}");
        assert_eq!(parse("r.json", doc.as_bytes()).unwrap().len(), 6);
        for cut in 0..=doc.len() {
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            let got = parse_head("r.json", &doc.as_bytes()[..cut]).map_or(0, |s| s.len());
            assert_eq!(got, 2 * whole, "cut at byte {cut}");
        }
        assert!(parse_head("w.json", format!("{{\"result\":{DOC}}}").as_bytes()).is_none());
    }

    /// Reading a big document reports its progress, up to the whole.
    #[test]
    fn a_big_document_reports_its_progress() {
        let resource = &DOC[DOC.find('[').unwrap() + 1..DOC.rfind(']').unwrap()];
        let doc = format!(
            r#"{{"resourceSpans":[{}]}}"#,
            vec![resource; 5000].join(",")
        );
        assert!(doc.len() > 4 << 20, "{} bytes", doc.len());
        let progress = crate::import::Progress::default();
        progress.set_total(doc.len() as u64);
        parse_with("p.json", doc.as_bytes(), Some(&progress)).unwrap();
        let done = progress.done.load(std::sync::atomic::Ordering::Relaxed) as usize;
        assert!(
            done > doc.len() * 2 / 3 && done <= doc.len(),
            "{done} of {}",
            doc.len()
        );
    }

    /// An error inside `resourceSpans` is at its line and column in the file.
    #[test]
    fn errors_inside_resources_are_at_their_place_in_the_file() {
        let doc = "{\n\"resourceSpans\": [{\"resource\": {},\n  \"\\ud800\": 1}]}";
        let e = parse("p.json", doc.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("line 3, column"), "{e}");
    }

    /// Documents damaged at random read or fail, whole and as heads, and never panic.
    #[test]
    fn randomly_damaged_documents_never_panic() {
        let mut rng = crate::generator::Rng(22);
        let alphabet = b"{}[]:,\"\\0123456789eE.-+ nulltrue\xff\xc3u";
        for _ in 0..3000 {
            let mut bytes = DOC.as_bytes().to_vec();
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
    fn spans_attributes_and_parents() {
        let s = parse("t.json", DOC.as_bytes()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.tracks[0].name, "api");
        assert_eq!(s.origin_ns, 1_544_712_660_000_000_000);
        assert_eq!(s.dur_ns[0], 1_000_000_000);
        // Upper- and lowercase hex ids are the same span.
        assert_eq!(s.parent[1], 0);
        assert_eq!(s.dur_ns[1], 0);
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            s.attrs.owned(0),
            [
                kv("span.kind", "server"),
                kv("n", "42"),
                kv("l", "[a, true]"),
                kv("m", "{x: 1.5}"),
                kv("status.code", "2"),
                kv("status.message", "boom"),
                kv("otel.scope.name", "lib"),
                kv("event", "+300000000ns cache miss"),
                kv("resource.host", "h1"),
            ]
        );
        assert_eq!(s.attrs.owned(1)[0], kv("span.kind", "client"));
        assert!(s.warnings.notes[0].contains("1 span ending before its start"));
    }

    #[test]
    fn wrappers_and_errors() {
        let v3 = format!(r#"{{"result":{DOC}}}"#);
        assert_eq!(parse("v3.json", v3.as_bytes()).unwrap().len(), 2);
        let arr = format!(
            "[{DOC},{}]",
            DOC.replace("5B8E", "6B8E").replace("5b8e", "6b8e")
        );
        let s = parse("a.json", arr.as_bytes()).unwrap();
        assert_eq!(s.len(), 4);
        assert!(s.warnings.notes.iter().all(|n| !n.contains("share an id")));
        let old = DOC
            .replace("scopeSpans", "instrumentationLibrarySpans")
            .replace("\"scope\"", "\"instrumentationLibrary\"");
        assert_eq!(parse("o.json", old.as_bytes()).unwrap().len(), 2);
        let bad = DOC.replace("\"1544712660100000000\"", "\"soon\"");
        let e = parse("b.json", bad.as_bytes()).unwrap_err().to_string();
        assert!(
            e.contains(
                "b.json: resourceSpans[0].scopeSpans[0].spans[1]: expected startTimeUnixNano"
            ),
            "{e}"
        );
        let e = parse("e.json", br#"{"resourceSpans":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no spans"), "{e}");
    }

    /// A random `{"resourceSpans": [...]}` document: resources with and without a
    /// `service.name` and other attributes, scopes under either name, spans whose parents
    /// are earlier spans of their trace or unknown, some ending before they start,
    /// repeated span ids, attributes and events; with `shared`, a resource takes a trace
    /// id of an earlier one (and its spans' ids as parents).
    fn random_doc(rng: &mut Rng, resources: usize, shared: bool) -> String {
        let ws = |rng: &mut Rng| [" ", "", "\n", "\t", "\r\n  "][rng.below(5) as usize];
        let mut earlier: Vec<(String, Vec<String>)> = Vec::new();
        let mut out = Vec::new();
        for r in 0..resources {
            let (tid, mut ids) = if shared && r > 0 && rng.below(3) == 0 {
                earlier[rng.below(r as u64) as usize].clone()
            } else {
                (format!("{:032x}", rng.next()), Vec::new())
            };
            let mut scopes = Vec::new();
            for _ in 0..1 + rng.below(2) {
                let mut spans = Vec::new();
                for _ in 0..rng.below(8) {
                    let id = if !ids.is_empty() && rng.below(12) == 0 {
                        ids[rng.below(ids.len() as u64) as usize].clone()
                    } else {
                        format!("{:016x}", rng.next())
                    };
                    let parent = match rng.below(5) {
                        0 => String::new(),
                        1 => "00000000000000ff".to_string(),
                        _ if !ids.is_empty() => ids[rng.below(ids.len() as u64) as usize].clone(),
                        _ => String::new(),
                    };
                    let start = 1_000_000 + rng.below(1_000_000);
                    let end = if rng.below(10) == 0 {
                        start - 5
                    } else {
                        start + rng.below(9999)
                    };
                    let attrs = if rng.below(2) == 0 {
                        format!(
                            ",{}\"attributes\":[{{\"key\":\"n\",\"value\":{{\"intValue\":\"{}\"}}}}]",
                            ws(rng),
                            rng.below(50)
                        )
                    } else {
                        String::new()
                    };
                    // An object that looks like a resource where a part's start is
                    // guessed.
                    let attrs = if rng.below(5) == 0 {
                        format!("{attrs},\"extra\":[{{\"resource\":{{}}}},{{ \"scopeSpans\" :[]}}]")
                    } else {
                        attrs
                    };
                    let events = if rng.below(6) == 0 {
                        ",\"events\":[{\"timeUnixNano\":\"1000100\",\"name\":\"e\"}]"
                    } else {
                        ""
                    };
                    spans.push(format!(
                        "{{\"traceId\":\"{tid}\",\"spanId\":\"{id}\",\"parentSpanId\":\"{parent}\",\
                         \"name\":\"op{}\",\"kind\":{},{}\"startTimeUnixNano\":\"{start}\",\
                         \"endTimeUnixNano\":{end}{attrs}{events}}}",
                        rng.below(7),
                        rng.below(4),
                        ws(rng)
                    ));
                    ids.push(id);
                }
                let scope =
                    ["\"scope\":{\"name\":\"lib\"}", "\"scope\":{}", ""][rng.below(3) as usize];
                let sep = if scope.is_empty() { "" } else { "," };
                scopes.push(format!(
                    "{{{scope}{sep}\"spans\":[{}]}}",
                    spans.join(&format!(",{}", ws(rng)))
                ));
            }
            let service = match rng.below(4) {
                0 => String::new(),
                k => format!(
                    "{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"svc{k}\"}}}},"
                ),
            };
            let key = ["scopeSpans", "instrumentationLibrarySpans"][rng.below(2) as usize];
            out.push(format!(
                "{{\"resource\":{{\"attributes\":[{service}{{\"key\":\"host\",\"value\":\
                 {{\"stringValue\":\"h{}\"}}}}]}},{}\"{key}\":[{}]}}",
                rng.below(3),
                ws(rng),
                scopes.join(",")
            ));
            earlier.push((tid, ids));
        }
        let rest = ["", ",\"note\":{\"a\":[1,2]}"][rng.below(2) as usize];
        format!(
            "{}{{\"resourceSpans\"{}:{}[{}{}]{rest}}}{}",
            ws(rng),
            ws(rng),
            ws(rng),
            ws(rng),
            out.join(&format!(",{}", ws(rng))),
            ws(rng)
        )
    }

    /// Documents read in parts, on 1 to 8 threads, give the set that reading them in one go gives (the
    /// note of spans ending before their start summed over the batches); they are left to
    /// that reading only where a trace id shows up in two runs; most are read in several.
    #[test]
    fn documents_read_in_parts_read_as_in_one_go() {
        let mut rng = Rng(23);
        let mut seen = PartsSeen::default();
        for case in 0..100 {
            let shared = case % 4 == 3;
            let doc = random_doc(&mut rng, 1 + case % 8, shared);
            let whole = parse("t.json", doc.as_bytes());
            let parts = |threads| read_in_parts("t.json", &doc, None, threads);
            parts_read_as_whole(&doc, &whole, shared, parts, &mut seen);
        }
        assert!(seen.read > 250, "{}", seen.read);
        assert!(seen.several > 150, "{}", seen.several);
    }

    /// A document of 4 MiB or more is read in parts, as in one go; what the parts do not
    /// take (a repeated `resourceSpans`, damage) is read in one go, with its errors.
    #[test]
    fn a_big_document_is_read_in_parts() {
        let mut rng = Rng(29);
        let mut resources = Vec::new();
        let mut len = 0;
        while len < PARALLEL_MIN + (1 << 20) {
            let one = random_doc(&mut rng, 1, false).replace(",\"note\":{\"a\":[1,2]}", "");
            let one = one.trim();
            let inner = &one[one.find('[').unwrap() + 1..one.rfind(']').unwrap()];
            len += inner.len() + 1;
            resources.push(inner.trim().to_string());
        }
        let doc = format!("{{\"resourceSpans\":[{}]}}", resources.join(","));
        let progress = crate::import::Progress::default();
        let parts = parse_with("t.json", doc.as_bytes(), Some(&progress)).unwrap();
        let done = progress.done.load(std::sync::atomic::Ordering::Relaxed) as usize;
        assert_eq!(done, doc.len() - 1, "to the array's end");
        let whole = read_whole("t.json", &doc, None).unwrap();
        assert_eq!(shown(&parts), shown(&whole));
        let (direct, runs) = read_in_parts("t.json", &doc, None, 3).unwrap();
        assert_eq!((shown(&direct), runs), (shown(&whole), 3));
        assert!(parts.len() > 10_000, "{}", parts.len());
        let again = format!("{}],\"resourceSpans\":[]}}", &doc[..doc.len() - 2]);
        assert!(read_in_parts("t.json", &again, None, 2).is_none());
        let e = parse("t.json", again.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("no spans"), "{e}");
        let damaged = doc.replacen("\"spanId\":", "\"spanId\"", 1);
        assert!(read_in_parts("t.json", &damaged, None, 2).is_none());
        let e = parse("t.json", damaged.as_bytes()).unwrap_err().to_string();
        assert!(
            e.starts_with("t.json: line ") && e.ends_with("expected `:`"),
            "{e}"
        );
    }

    /// Fuzzing found it: a vertical tab after `[` (not JSON's whitespace, so serde stops
    /// there) was passed over by the reading in parts, which then read the document that
    /// serde refuses. The parts find their first element by JSON's whitespace alone.
    #[test]
    fn parts_start_after_json_whitespace_only() {
        let doc = r#"{"resourceSpans": [
    {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]},
     "scopeSpans": [{"scope": {}, "spans": [{"traceId": "1", "spanId": "2",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]}"#;
        assert!(parse("t.json", doc.as_bytes()).is_ok());
        for bad in [doc.replacen("[\n", "[\u{b}\n", 1), format!("\u{b}{doc}")] {
            let one = parse("t.json", bad.as_bytes()).map(|s| shown(&s));
            let parts = parse_with_threads("t.json", bad.as_bytes(), None, 3).map(|s| shown(&s));
            assert!(one.is_err(), "{bad:?}");
            assert_eq!(format!("{one:?}"), format!("{parts:?}"));
        }
        let jaeger =
            r#"{"data":[{"traceID":"1","spans":[{"spanID":"1","startTime":1,"duration":1}]}]}"#;
        for bad in [
            jaeger.replacen("[", "[\u{b}", 1),
            format!("[\u{b}{}]", &jaeger[9..jaeger.len() - 2]),
        ] {
            let one = crate::import::jaeger::parse("t.json", bad.as_bytes()).map(|s| shown(&s));
            let parts =
                crate::import::jaeger::parse_with_threads("t.json", bad.as_bytes(), None, 3)
                    .map(|s| shown(&s));
            assert!(one.is_err(), "{bad:?}");
            assert_eq!(format!("{one:?}"), format!("{parts:?}"));
        }
    }

    /// JSON Lines, as the OpenTelemetry Collector's file exporter writes them (one
    /// request a line): the spans of every line, as one document holding all their
    /// resources gives them; a line that does not read is skipped and counted, errors
    /// name their line; the preview reads the lines whole in its head.
    #[test]
    fn json_lines_read_line_by_line() {
        let mut rng = Rng(37);
        let docs: Vec<String> = (0..4).map(|_| random_doc(&mut rng, 2, false)).collect();
        let one_line = |d: &String| d.replace(['\n', '\r'], " ").trim().to_string();
        let lines: Vec<String> = docs.iter().map(one_line).collect();
        let text = lines.join("\n") + "\n";
        // The same resources in one document.
        let resources: Vec<String> = lines
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let rs = v["resourceSpans"].as_array().unwrap().clone();
                rs.iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .filter(|r| !r.is_empty())
            .collect();
        let whole = format!("{{\"resourceSpans\":[{}]}}", resources.join(","));
        let a = parse("t.json", text.as_bytes()).unwrap();
        let b = parse("t.json", whole.as_bytes()).unwrap();
        assert_eq!(shown(&a), shown(&b));
        assert!(a.len() > 10, "{}", a.len());
        // In parts: a run of lines a thread.
        assert!(json_lines(&text, text.find('[').unwrap()));
        assert!(!json_lines(&whole, whole.find('[').unwrap()));
        for threads in [2, 3, 8] {
            let (p, runs) = read_in_parts("t.json", &text, None, threads).unwrap();
            assert_eq!(shown(&p), shown(&a));
            assert!(runs > 1, "{runs}");
        }
        // A line cut short (and a line of something else) is skipped and counted.
        let cut = format!(
            "{}\n{}\n{}\n{}\n",
            lines[0],
            &lines[1][..lines[1].len() / 2],
            lines[2],
            lines[3]
        );
        let c = parse("t.json", cut.as_bytes()).unwrap();
        assert!(read_in_parts("t.json", &cut, None, 3).is_none());
        assert_eq!(c.warnings.invalid_lines, 1);
        assert!(
            c.warnings
                .first_invalid
                .as_deref()
                .unwrap()
                .starts_with("line 2: "),
            "{:?}",
            c.warnings
        );
        let without: String = [&lines[0], &lines[2], &lines[3]]
            .map(|l| format!("{l}\n"))
            .concat();
        let w = parse("t.json", without.as_bytes()).unwrap();
        assert_eq!((c.len(), c.name.clone()), (w.len(), w.name.clone()));
        // A line that is not a request names its line; one document with bytes after it
        // is "trailing characters", as before.
        let e = parse("t.json", format!("{text}{{\"x\":1}}\n").as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .contains("t.json: line 5: expected {\"resourceSpans\""),
            "{e}"
        );
        let e = parse("t.json", format!("{} x", lines[0]).as_bytes()).unwrap_err();
        assert!(e.to_string().contains("trailing characters"), "{e}");
        // The preview: the lines whole in a head cut in the third.
        let head = &text[..lines[0].len() + lines[1].len() + 2 + lines[2].len() / 2];
        let p = parse_head("t.json", head.as_bytes()).unwrap();
        let two = parse("t.json", format!("{}\n{}\n", lines[0], lines[1]).as_bytes()).unwrap();
        assert_eq!(shown(&p), shown(&two));
    }
}
