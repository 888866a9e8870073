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
use super::trace_json::{
    SpanCollector, as_u64, go_duration_ns, invalid, read_value, rfc3339_ns, shown, text_of,
};
use crate::model::spans::SpanSet;
use serde_json::{Map, Value};

/// Parses a Jaeger JSON document.
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    let doc = read_value(file, text)?;
    let traces = traces_of(&doc).ok_or_else(|| {
        invalid(
            file,
            "top level",
            "expected Jaeger traces: {\"data\": [traces]}, {\"traceID\", \"spans\", \"processes\"}, \
             an array of traces, or an array of spans",
        )
    })?;
    let mut out = SpanCollector::default();
    for t in &traces {
        for (k, span) in t.spans.iter().enumerate() {
            let path = format!("{}[{k}]", t.path);
            read_span(file, &path, span, t, &mut out)?;
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

/// One trace's spans and processes, with the JSON path of its `spans`.
struct TraceRef<'a> {
    path: String,
    trace_id: Option<&'a str>,
    spans: &'a [Value],
    processes: Option<&'a Map<String, Value>>,
    /// Track name for spans without a process (Google Cloud Trace's `projectId`).
    project: Option<&'a str>,
}

fn trace_ref<'a>(v: &'a Value, path: String) -> Option<TraceRef<'a>> {
    let spans = v.get("spans")?.as_array()?;
    Some(TraceRef {
        path: format!("{path}spans"),
        trace_id: v
            .get("traceID")
            .or_else(|| v.get("traceId"))
            .and_then(Value::as_str),
        spans,
        processes: v.get("processes").and_then(Value::as_object),
        project: v.get("projectId").and_then(Value::as_str),
    })
}

fn is_span(v: &Value) -> bool {
    v.get("spanID").is_some() || v.get("spanId").is_some()
}

fn traces_of(doc: &Value) -> Option<Vec<TraceRef<'_>>> {
    match doc {
        Value::Object(o) => match o.get("data") {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, t)| trace_ref(t, format!("data[{i}].")))
                .collect(),
            Some(d @ Value::Object(_)) => Some(vec![trace_ref(d, "data.".to_string())?]),
            _ => Some(vec![trace_ref(doc, String::new())?]),
        },
        Value::Array(a) if a.iter().all(is_span) => Some(vec![TraceRef {
            path: String::new(),
            trace_id: None,
            spans: a,
            processes: None,
            project: None,
        }]),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, t)| trace_ref(t, format!("[{i}].")))
            .collect(),
        _ => None,
    }
}

fn str_field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k)).and_then(Value::as_str)
}

/// Tags as `(key, value)`: UI form `{key, type, value}` or domain form `{key, vType,
/// vStr|vInt64|vFloat64|vBool|vBinary}`.
fn tags(v: Option<&Value>, prefix: &str, out: &mut Vec<(String, String)>) {
    let Some(list) = v.and_then(Value::as_array) else {
        return;
    };
    for t in list {
        let Some(key) = t.get("key").and_then(Value::as_str) else {
            continue;
        };
        let value = ["value", "vStr", "vInt64", "vFloat64", "vBool", "vBinary"]
            .iter()
            .find_map(|k| t.get(*k))
            .map_or_else(String::new, text_of);
        out.push((format!("{prefix}{key}"), value));
    }
}

fn read_span(
    file: &str,
    path: &str,
    span: &Value,
    t: &TraceRef<'_>,
    out: &mut SpanCollector,
) -> Result<(), ImportError> {
    if !span.is_object() {
        return Err(invalid(
            file,
            path,
            format!("expected a span object, found {}", shown(span)),
        ));
    }
    let span_id = str_field(span, &["spanID", "spanId"])
        .ok_or_else(|| invalid(file, path, "expected a spanID string"))?;
    let trace_id = str_field(span, &["traceID", "traceId"])
        .or(t.trace_id)
        .unwrap_or("");
    let start = span
        .get("startTime")
        .ok_or_else(|| invalid(file, path, "expected startTime"))?;
    let start_ns: u64 = match start {
        Value::String(s) if s.contains('T') => rfc3339_ns(s).and_then(|n| u64::try_from(n).ok()),
        other => as_u64(other).and_then(|us| us.checked_mul(1000)),
    }
    .ok_or_else(|| {
        invalid(
            file,
            path,
            format!(
                "expected startTime in microseconds since the Unix epoch (or RFC 3339), found {}",
                shown(start)
            ),
        )
    })?;
    let end = span.get("endTime").and_then(Value::as_str);
    let dur_ns: u64 = match span.get("duration") {
        None | Some(Value::Null) if end.is_some() => {
            let end_ns = end
                .and_then(rfc3339_ns)
                .ok_or_else(|| invalid(file, path, "expected endTime as an RFC 3339 time"))?;
            u64::try_from(end_ns).unwrap_or(0).saturating_sub(start_ns)
        }
        None | Some(Value::Null) => 0,
        Some(d) => match d {
            Value::String(s) if !s.bytes().all(|b| b.is_ascii_digit()) => {
                go_duration_ns(s).and_then(|n| u64::try_from(n).ok())
            }
            other => as_u64(other).and_then(|us| us.checked_mul(1000)),
        }
        .filter(|&d| start_ns.checked_add(d).is_some())
        .ok_or_else(|| {
            invalid(
                file,
                path,
                format!(
                    "expected duration in microseconds (or a Go duration like \"1.5ms\"), found {}",
                    shown(d)
                ),
            )
        })?,
    };

    // Parents: CHILD_OF first, then FOLLOWS_FROM, then the old parentSpanID field.
    let mut parents: Vec<(String, String)> = Vec::new();
    if let Some(refs) = span.get("references").and_then(Value::as_array) {
        for want in ["CHILD_OF", "FOLLOWS_FROM"] {
            for r in refs {
                let kind = str_field(r, &["refType"]).unwrap_or("CHILD_OF");
                if !kind.eq_ignore_ascii_case(want) {
                    continue;
                }
                if let Some(p) = str_field(r, &["spanID", "spanId"]) {
                    let tr = str_field(r, &["traceID", "traceId"]).unwrap_or(trace_id);
                    parents.push((tr.to_string(), p.to_string()));
                }
            }
        }
    }
    if let Some(p) = str_field(span, &["parentSpanID", "parentSpanId"])
        && !p.trim_start_matches('0').is_empty()
    {
        parents.push((trace_id.to_string(), p.to_string()));
    }

    let process = span.get("process").or_else(|| {
        let id = span.get("processID").and_then(Value::as_str)?;
        t.processes?.get(id)
    });
    let service = process
        .and_then(|p| p.get("serviceName"))
        .and_then(Value::as_str)
        .or(t.project)
        .unwrap_or("unknown service");
    let track = out.service_track(service);

    let mut attrs = Vec::new();
    if let Some(k) = span.get("kind").and_then(Value::as_str) {
        attrs.push(("kind".to_string(), k.to_string()));
    }
    tags(span.get("tags"), "", &mut attrs);
    if let Some(labels) = span.get("labels").and_then(Value::as_object) {
        attrs.extend(labels.iter().map(|(k, v)| (k.clone(), text_of(v))));
    }
    tags(process.and_then(|p| p.get("tags")), "process.", &mut attrs);
    if let Some(logs) = span.get("logs").and_then(Value::as_array) {
        for log in logs {
            let mut fields = Vec::new();
            tags(log.get("fields"), "", &mut fields);
            let at = log.get("timestamp").map_or_else(String::new, text_of);
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            attrs.push(("log".to_string(), format!("{at} {}", body.join(" "))));
        }
    }
    let name = str_field(span, &["operationName", "name"])
        .unwrap_or("")
        .to_string();
    out.push(
        trace_id, span_id, parents, start_ns, dur_ns, name, track, attrs,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
