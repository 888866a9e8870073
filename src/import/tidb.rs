//! TiDB trace JSON, as the TiDB Dashboard fetches it (`../shared/seeds/001_*`):
//!
//! ```json
//! {"trace_id": 5796316316865205225,
//!  "span_sets": [{"node_type": "TiKV",
//!                 "spans": [{"span_id": 393276, "parent_id": 393275,
//!                            "begin_unix_time_ns": 1607658272409814199,
//!                            "duration_ns": 302332,
//!                            "event": "Endpoint::parse_and_handle_unary_request"}]}]}
//! ```
//!
//! Span sets of different node types (TiDB, TiKV, PD) form one tree: a TiKV span's parent
//! is often a TiDB span. Each span set becomes a track (named by its node type) that the
//! span remembers; `parent_id` 0 marks a root. Ids and times are 64-bit and may exceed
//! 2^53, so they are read as integers (or digit strings), never as floats.

use super::ImportError;
use super::flamebearer::Num;
use crate::model::Warnings;
use crate::model::names::Names;
use crate::model::spans::{RawSpan, SpanSet, Track};
use serde::Deserialize;

#[derive(Deserialize)]
struct TraceJson {
    #[serde(default)]
    span_sets: Vec<SpanSetJson>,
}

#[derive(Deserialize)]
struct SpanSetJson {
    #[serde(default)]
    node_type: Option<String>,
    #[serde(default)]
    spans: Vec<SpanJson>,
}

#[derive(Deserialize)]
struct SpanJson {
    span_id: Num,
    #[serde(default)]
    parent_id: Option<Num>,
    begin_unix_time_ns: Num,
    duration_ns: Num,
    #[serde(default)]
    event: Option<String>,
}

/// Parses a TiDB trace document.
pub fn parse(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    parse_with(file, text, None)
}

/// [`parse`], reporting how far it has got to `progress`: read in place on all cores
/// ([`super::tidb_fast`]), or by serde where that reader does not take the document
/// (which then gives serde's errors and their positions).
pub fn parse_with(
    file: &str,
    text: &[u8],
    progress: Option<&super::Progress>,
) -> Result<SpanSet, ImportError> {
    if let Ok(s) = simdutf8::basic::from_utf8(text)
        && let Some(set) = super::tidb_fast::read(s, progress)
    {
        return Ok(set);
    }
    parse_serde(file, text)
}

/// The spans of the start of a TiDB document cut anywhere, as far as whole spans go (a
/// preview of a big file); `None` when there is none.
pub fn parse_head(head: &[u8]) -> Option<SpanSet> {
    super::tidb_fast::read_head(super::trace_json::utf8_head(head)?)
}

/// Parses a TiDB trace document with serde.
pub(super) fn parse_serde(file: &str, text: &[u8]) -> Result<SpanSet, ImportError> {
    let doc: TraceJson = serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    let mut tracks: Vec<Track> = Vec::new();
    let mut spans = Vec::new();
    for (si, set) in doc.span_sets.into_iter().enumerate() {
        let name = set.node_type.unwrap_or_else(|| format!("span set {si}"));
        let track = match tracks.iter().position(|t| t.name == name) {
            Some(i) => i as u32,
            None => {
                tracks.push(Track { name });
                tracks.len() as u32 - 1
            }
        };
        for (j, s) in set.spans.into_iter().enumerate() {
            if s.begin_unix_time_ns
                .0
                .checked_add(s.duration_ns.0)
                .is_none()
            {
                return Err(ImportError::Invalid {
                    file: file.to_string(),
                    location: format!("span_sets[{si}].spans[{j}]"),
                    message: "begin_unix_time_ns + duration_ns exceeds 2^64".to_string(),
                });
            }
            spans.push(RawSpan {
                id: s.span_id.0,
                parent_id: s.parent_id.map(|p| p.0).filter(|&p| p != 0),
                start_ns: s.begin_unix_time_ns.0,
                dur_ns: s.duration_ns.0,
                name: s.event.unwrap_or_default(),
                track,
            });
        }
    }
    if spans.is_empty() {
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "span_sets".to_string(),
            message: "no spans: expected span_sets[].spans[] with span_id, begin_unix_time_ns and duration_ns".to_string(),
        });
    }
    Ok(SpanSet::from_ids(
        Names::new(),
        spans,
        tracks,
        Warnings::default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::timeline::timeline_layout;
    use crate::model::spans::SpanTree;

    /// The seed's own example, completed with the TiDB spans its TiKV spans point to.
    const SEED: &str = r#"{
      "trace_id": 5796316316865205225,
      "span_sets": [
        {"node_type": "TiDB", "spans": [
          {"span_id": 393275, "parent_id": 0, "begin_unix_time_ns": 1607658272409800000, "duration_ns": 600000, "event": "session.ExecuteStmt"},
          {"span_id": 393278, "parent_id": 393275, "begin_unix_time_ns": 1607658272410100000, "duration_ns": 200000, "event": "executor.Next"}
        ]},
        {"node_type": "TiKV", "spans": [
          {"span_id": 393276, "parent_id": 393275, "begin_unix_time_ns": 1607658272409814199, "duration_ns": 302332, "event": "Endpoint::parse_and_handle_unary_request"},
          {"span_id": 917515, "parent_id": 393278, "begin_unix_time_ns": 1607658272410116531, "duration_ns": 134483, "event": "RaftKv::async_snapshot"},
          {"span_id": 917516, "parent_id": 917515, "begin_unix_time_ns": 1607658272410116531, "duration_ns": 134483, "event": "LocalReader::propose_raft_command"}
        ]}
      ]
    }"#;

    #[test]
    fn seed_trace_links_across_span_sets() {
        let s = parse("seed.json", SEED.as_bytes()).unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s.tracks.len(), 2);
        assert_eq!(s.tracks[1].name, "TiKV");
        assert_eq!(s.origin_ns, 1607658272409800000);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let t = SpanTree::build(&s);
        assert_eq!(t.roots.len(), 1);
        let l = timeline_layout(&s, &t);
        // parse_and_handle (TiKV) overlaps executor.Next: it goes under Next's family.
        let row_of = |name: &str| {
            l.depth[(0..s.len())
                .find(|&i| s.names.get(s.name[i]) == name)
                .unwrap()]
        };
        assert_eq!(row_of("session.ExecuteStmt"), 0);
        assert_eq!(row_of("executor.Next"), 1);
        assert_eq!(row_of("RaftKv::async_snapshot"), 2);
        assert_eq!(row_of("LocalReader::propose_raft_command"), 3);
        assert_eq!(row_of("Endpoint::parse_and_handle_unary_request"), 5);
        assert_eq!(l.connectors.len(), 1);
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("t.json", br#"{"span_sets": [{"spans": [{"span_id": 1, "begin_unix_time_ns": -5, "duration_ns": 1}]}]}"#)
            .unwrap_err();
        assert!(matches!(e, ImportError::Json { line: 1, .. }), "{e}");
        let e = parse("t.json", br#"{"span_sets": []}"#).unwrap_err();
        assert!(e.to_string().contains("no spans"), "{e}");
    }
}
