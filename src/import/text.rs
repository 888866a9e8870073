//! Small helpers the text importers share.

/// A line shortened for messages: at most 80 characters, quoted.
pub(crate) fn preview(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    format!("'{out}'")
}
