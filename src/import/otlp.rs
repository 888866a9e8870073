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
//! api_v3 wrapper `{"result": {"resourceSpans": …}}`, and an array of such documents.
//! Times are Unix nanoseconds as digit strings (the protobuf JSON mapping of `fixed64`)
//! or numbers; ids are hex (base64 accepted), scoped by trace id. Each resource's
//! `service.name` names its track. Attributes (`stringValue`, `intValue`, `doubleValue`,
//! `boolValue`, `bytesValue`, `arrayValue`, `kvlistValue`), the span kind, status,
//! scope name and events become span attributes. A span ending before it starts gets
//! zero duration (counted). As in the protobuf JSON mapping, a missing field is its zero
//! value (Jaeger's api_v3 snapshot omits both times).

use super::ImportError;
use super::trace_json::{SpanCollector, as_u64, invalid, read_value, shown, text_of};
use crate::model::spans::SpanSet;
use serde_json::Value;

/// Parses an OTLP/JSON trace document.
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    let doc = read_value(file, text)?;
    let mut roots: Vec<(String, &Vec<Value>)> = Vec::new();
    let docs: Vec<(String, &Value)> = match &doc {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("[{i}]."), d))
            .collect(),
        d => vec![(String::new(), d)],
    };
    for (prefix, d) in docs {
        let (p, rs) = match (d.get("resourceSpans"), d.get("result")) {
            (Some(rs), _) => (format!("{prefix}resourceSpans"), rs),
            (None, Some(r)) if r.get("resourceSpans").is_some() => {
                (format!("{prefix}result.resourceSpans"), &r["resourceSpans"])
            }
            _ => {
                return Err(invalid(
                    file,
                    if prefix.is_empty() {
                        "top level"
                    } else {
                        &prefix
                    },
                    "expected {\"resourceSpans\": [...]} (or {\"result\": {\"resourceSpans\": [...]}})",
                ));
            }
        };
        let list = rs
            .as_array()
            .ok_or_else(|| invalid(file, &p, format!("expected an array, found {}", shown(rs))))?;
        roots.push((p, list));
    }

    let mut out = SpanCollector::default();
    let mut backwards = 0u64;
    for (p, list) in roots {
        for (ri, rs) in list.iter().enumerate() {
            let rpath = format!("{p}[{ri}]");
            let mut resource_attrs = Vec::new();
            if let Some(a) = rs.get("resource").and_then(|r| r.get("attributes")) {
                attributes(a, "", &mut resource_attrs);
            }
            let service = resource_attrs
                .iter()
                .find(|(k, _)| k == "service.name")
                .map_or("unknown_service", |(_, v)| v.as_str())
                .to_string();
            let track = out.service_track(&service);
            let scopes = rs
                .get("scopeSpans")
                .or_else(|| rs.get("instrumentationLibrarySpans"))
                .and_then(Value::as_array);
            let scope_key = if rs.get("scopeSpans").is_some() {
                "scopeSpans"
            } else {
                "instrumentationLibrarySpans"
            };
            for (si, ss) in scopes.into_iter().flatten().enumerate() {
                let scope_name = ss
                    .get("scope")
                    .or_else(|| ss.get("instrumentationLibrary"))
                    .and_then(|s| s.get("name"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let spans = ss.get("spans").and_then(Value::as_array);
                for (k, span) in spans.into_iter().flatten().enumerate() {
                    let path = format!("{rpath}.{scope_key}[{si}].spans[{k}]");
                    read_span(
                        file,
                        &path,
                        span,
                        track,
                        scope_name,
                        &resource_attrs,
                        &mut out,
                        &mut backwards,
                    )?;
                }
            }
        }
    }
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

/// `[{key, value: AnyValue}]` as pairs, keys prefixed.
fn attributes(list: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    for a in list.as_array().into_iter().flatten() {
        if let Some(k) = a.get("key").and_then(Value::as_str) {
            out.push((
                format!("{prefix}{k}"),
                a.get("value").map_or_else(String::new, any_value),
            ));
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
    path: &str,
    span: &Value,
    track: u32,
    scope: Option<&str>,
    resource_attrs: &[(String, String)],
    out: &mut SpanCollector,
    backwards: &mut u64,
) -> Result<(), ImportError> {
    let id = |k: &str| span.get(k).and_then(Value::as_str).unwrap_or("");
    let span_id = id("spanId");
    if span_id.is_empty() {
        return Err(invalid(file, path, "expected a spanId string"));
    }
    let trace_id = id("traceId");
    let time = |k: &str| -> Result<u64, ImportError> {
        // The protobuf JSON mapping omits zero values: a missing time is 0.
        let Some(v) = span.get(k) else { return Ok(0) };
        as_u64(v).ok_or_else(|| {
            invalid(
                file,
                path,
                format!(
                    "expected {k} as Unix nanoseconds (a digit string or an integer), found {}",
                    shown(v)
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
    let parents = if parent.is_empty() || parent.trim_start_matches('0').is_empty() {
        Vec::new()
    } else {
        vec![(trace_id.to_string(), parent.to_string())]
    };

    let mut attrs = Vec::new();
    if let Some(k) = span.get("kind").and_then(kind_name) {
        attrs.push(("span.kind".to_string(), k.to_string()));
    }
    if let Some(a) = span.get("attributes") {
        attributes(a, "", &mut attrs);
    }
    if let Some(st) = span.get("status") {
        if let Some(c) = st.get("code") {
            attrs.push(("status.code".to_string(), text_of(c)));
        }
        if let Some(m) = st
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            attrs.push(("status.message".to_string(), m.to_string()));
        }
    }
    if let Some(s) = scope {
        attrs.push(("otel.scope.name".to_string(), s.to_string()));
    }
    for e in span
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut ea = Vec::new();
        if let Some(a) = e.get("attributes") {
            attributes(a, "", &mut ea);
        }
        let at = e
            .get("timeUnixNano")
            .and_then(as_u64)
            .map_or_else(String::new, |t| {
                format!("+{}ns ", t.saturating_sub(start_ns))
            });
        let body: Vec<String> = ea.iter().map(|(k, v)| format!("{k}={v}")).collect();
        attrs.push((
            "event".to_string(),
            format!(
                "{at}{} {}",
                e.get("name").and_then(Value::as_str).unwrap_or(""),
                body.join(" ")
            )
            .trim_end()
            .to_string(),
        ));
    }
    attrs.extend(
        resource_attrs
            .iter()
            .filter(|(k, _)| k != "service.name")
            .map(|(k, v)| (format!("resource.{k}"), v.clone())),
    );
    let name = span
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    out.push(
        trace_id,
        span_id,
        parents,
        start_ns,
        end_ns.saturating_sub(start_ns),
        name,
        track,
        attrs,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
