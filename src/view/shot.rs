//! A screenshot that remembers: what the window showed, written into the PNG it saves
//! (an iTXt chunk with the keyword [`KEYWORD`], JSON), so that opening the PNG reopens the
//! source at the same view: the file and its size, the view, the transforms, the place
//! (zoom range, focus, scroll), the search, the selected function, colors and label fit.
//!
//! Reading is bounded: only PNGs whose header says so are read, the chunk is at most
//! [`MAX_STATE_BYTES`], and anything unexpected is an error naming the file.

use super::ViewMemo;
use super::draw::LabelFit;
use crate::color::ColorMode;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The keyword of the PNG text chunk that holds the state.
pub const KEYWORD: &str = "scorch:state";

/// The largest state chunk read (a state is a few hundred bytes; call paths and search
/// queries can make it longer).
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// The eight bytes every PNG starts with.
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// What a window screenshot records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShotState {
    /// The format of this record.
    pub version: u32,
    /// The profile or trace shown (an absolute path when the window knew one; empty for
    /// the bundled demo).
    pub source: String,
    /// Its size in bytes when the screenshot was taken.
    pub source_bytes: Option<u64>,
    /// The view's name (`flame graph`, `table`, …).
    pub view: String,
    /// The transforms applied, in order, as `KIND:NAME`.
    pub transforms: Vec<String>,
    /// The search query.
    pub search: String,
    /// The selected (or centred) function.
    pub function: Option<String>,
    /// Colors, by the CLI's name.
    pub color: Option<String>,
    /// Label fit, `head` or `tail`.
    pub fit: Option<String>,
    /// The click-zoomed call path.
    pub zoom_path: Option<Vec<String>>,
    /// The focused call path.
    pub focus_path: Option<Vec<String>>,
    /// The visible part of the root, as fractions.
    pub fraction: Option<(f64, f64)>,
    /// A timeline's visible window, absolute nanoseconds.
    pub time_window: Option<(f64, f64)>,
    /// Vertical scroll, physical pixels.
    pub scroll_px: f32,
}

/// The current record format.
pub const VERSION: u32 = 1;

impl ShotState {
    /// The state of a window showing view `view` of `source` with `memo`, `transforms`
    /// and `search`.
    pub fn new(
        source: Option<&Path>,
        view: &str,
        memo: &ViewMemo,
        transforms: Vec<String>,
        search: &str,
    ) -> ShotState {
        let source_abs = source.map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
        ShotState {
            version: VERSION,
            source_bytes: source_abs
                .as_deref()
                .and_then(|p| std::fs::metadata(p).ok())
                .map(|m| m.len()),
            source: source_abs.map_or(String::new(), |p| p.display().to_string()),
            view: view.to_string(),
            transforms,
            search: search.to_string(),
            function: memo.function.clone(),
            color: memo.color.map(|c| c.name().to_string()),
            fit: memo.fit.map(|f| f.name().to_string()),
            zoom_path: memo.zoom_path.clone(),
            focus_path: memo.focus_path.clone(),
            fraction: memo.fraction,
            time_window: memo.time_window,
            scroll_px: memo.scroll_px,
        }
    }

    /// What a view takes over from this state (names it does not know are left out).
    pub fn memo(&self) -> ViewMemo {
        ViewMemo {
            color: self
                .color
                .as_deref()
                .and_then(|c| <ColorMode as clap::ValueEnum>::from_str(c, true).ok()),
            orientation: None,
            focus_path: self.focus_path.clone(),
            zoom_path: self.zoom_path.clone(),
            fraction: self.fraction,
            time_window: self.time_window,
            scroll_px: self.scroll_px,
            fit: match self.fit.as_deref() {
                Some("tail") => Some(LabelFit::Tail),
                Some("head") => Some(LabelFit::Head),
                _ => None,
            },
            function: self.function.clone(),
        }
    }

    /// The record as the PNG chunk holds it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a state is plain data")
    }

    /// A few lines for a person: what the picture showed.
    pub fn describe(&self) -> String {
        let mut lines = vec![
            format!(
                "source: {}{}",
                if self.source.is_empty() {
                    "the bundled demo"
                } else {
                    &self.source
                },
                self.source_bytes
                    .map(|b| format!(" ({b} bytes)"))
                    .unwrap_or_default()
            ),
            format!("view: {}", self.view),
        ];
        if let Some(p) = self.zoom_path.as_ref().or(self.focus_path.as_ref()) {
            lines.push(format!("zoomed to: {}", p.join(" › ")));
        } else if let Some((a, b)) = self.fraction {
            lines.push(format!(
                "zoomed to: {:.2}% to {:.2}% of the whole",
                a * 100.0,
                b * 100.0
            ));
        }
        if !self.transforms.is_empty() {
            lines.push(format!("transforms: {}", self.transforms.join(", ")));
        }
        if !self.search.is_empty() {
            lines.push(format!("search: {}", self.search));
        }
        if let Some(f) = &self.function {
            lines.push(format!("function: {f}"));
        }
        lines.join("\n")
    }
}

/// Whether `bytes` start like a PNG.
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&PNG_SIGNATURE)
}

/// The state recorded in the PNG `bytes`: `Ok(None)` for a PNG without one, an error for
/// a damaged PNG or record.
pub fn read_state(bytes: &[u8]) -> Result<Option<ShotState>, String> {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_ignore_text_chunk(false);
    let reader = dec
        .read_info()
        .map_err(|e| format!("not a readable PNG: {e}"))?;
    let info = reader.info();
    let Some(chunk) = info.utf8_text.iter().find(|c| c.keyword == KEYWORD) else {
        return Ok(None);
    };
    let text = chunk
        .get_text()
        .map_err(|e| format!("the {KEYWORD} chunk cannot be read: {e}"))?;
    if text.len() > MAX_STATE_BYTES {
        return Err(format!(
            "the {KEYWORD} chunk is {} bytes, more than the {MAX_STATE_BYTES} a state can be",
            text.len()
        ));
    }
    let state: ShotState = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the {KEYWORD} chunk is not a scorch state (line {}, column {}: {e})",
            e.line(),
            e.column()
        )
    })?;
    if state.version != VERSION {
        return Err(format!(
            "the state was written by another version of scorch (format {}, this one reads {VERSION})",
            state.version
        ));
    }
    Ok(Some(state))
}

/// Reads the state of the PNG at `path`: `Ok(None)` when it is not a PNG, an error when it
/// is one without a state (only window screenshots record one) or a damaged one.
pub fn read_state_file(path: &Path) -> Result<Option<ShotState>, String> {
    use std::io::Read;
    let mut head = [0u8; 8];
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if f.read_exact(&mut head).is_err() || !is_png(&head) {
        return Ok(None);
    }
    // The chunks before the image data are all read needs; a screenshot is small, but
    // read no more than the state can be plus a generous allowance for the header.
    let mut bytes = head.to_vec();
    f.take((MAX_STATE_BYTES as u64) * 2)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match read_state(&bytes) {
        Ok(Some(state)) => Ok(Some(state)),
        Ok(None) => Err(format!(
            "{} is a PNG without a scorch state (only screenshots saved from the window record \
             one): open the profile it shows instead",
            path.display()
        )),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// A PNG of `width` × `height` RGB pixels `rgb` with `state` recorded in it.
pub fn encode_rgb_png(
    width: u32,
    height: u32,
    rgb: &[u8],
    state: Option<&ShotState>,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        if let Some(s) = state {
            enc.add_itxt_chunk(KEYWORD.to_string(), s.to_json())
                .map_err(|e| e.to_string())?;
        }
        let mut w = enc.write_header().map_err(|e| e.to_string())?;
        w.write_image_data(rgb).map_err(|e| e.to_string())?;
        w.finish().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> ShotState {
        ShotState::new(
            None,
            "both",
            &ViewMemo {
                color: Some(ColorMode::Value),
                fit: Some(LabelFit::Tail),
                zoom_path: Some(vec!["main".into(), "wörk".into()]),
                fraction: Some((0.25, 0.5)),
                scroll_px: 12.0,
                function: Some("f".into()),
                ..ViewMemo::default()
            },
            vec!["merge:g".into()],
            "ab|c",
        )
    }

    #[test]
    fn a_state_survives_the_png_and_gives_back_the_memo() {
        let rgb = vec![200u8; 3 * 2 * 3];
        let s = state();
        let png = encode_rgb_png(3, 2, &rgb, Some(&s)).unwrap();
        assert!(is_png(&png));
        let back = read_state(&png).unwrap().expect("a state");
        assert_eq!(back, s);
        let m = back.memo();
        assert_eq!(m.color, Some(ColorMode::Value));
        assert_eq!(m.fit, Some(LabelFit::Tail));
        assert_eq!(m.zoom_path.as_deref().unwrap()[1], "wörk");
        assert_eq!(m.fraction, Some((0.25, 0.5)));
        assert_eq!(m.function.as_deref(), Some("f"));
        // A plain PNG has none; damage is an error, not a panic.
        let plain = encode_rgb_png(3, 2, &rgb, None).unwrap();
        assert_eq!(read_state(&plain).unwrap(), None);
        assert!(read_state(&png[..20]).is_err());
        let mut bad = s.clone();
        bad.version = 99;
        let png = encode_rgb_png(3, 2, &rgb, Some(&bad)).unwrap();
        assert!(read_state(&png).unwrap_err().contains("another version"));
        let png = {
            let mut out = Vec::new();
            let mut enc = png::Encoder::new(&mut out, 1, 1);
            enc.set_color(png::ColorType::Rgb);
            enc.add_itxt_chunk(KEYWORD.into(), "{not json".into())
                .unwrap();
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[0, 0, 0]).unwrap();
            w.finish().unwrap();
            out
        };
        assert!(read_state(&png).unwrap_err().contains("not a scorch state"));
        assert!(s.describe().contains("zoomed to: main › wörk"));
        assert!(s.describe().contains("transforms: merge:g"));
        assert!(s.describe().contains("the bundled demo"));
    }
}
