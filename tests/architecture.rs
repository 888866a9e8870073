//! The module structure, checked: the GPU-free core never names wgpu, winit or glyphon,
//! and no module imports one from a layer above it (so there are no cycles between them).
//!
//! The layers, bottom to top, as `ARCHITECTURE.md` draws them (a module may use its own
//! layer's and lower layers' modules):
//!
//! ```text
//! 0  model color par heap    data: names, call trees, spans, documents; the color reference;
//!                            joining scoped threads; where a load's large blocks come from
//! 1  import layout           bytes in; rows of bars
//! 2  lod geometry generator  level of detail; where things land; synthetic inputs
//! 3  pick                    what is under the pointer
//! 4  view                    views, draw data, the frame shell, input as data
//! 5  summary render          `scorch info`; wgpu
//! 6  export                  PNGs
//! 7  app                     the winit window
//! ```
//!
//! Test code (`#[cfg(test)]` items) may use anything: it is left out of the check, as are
//! comments (doc links name higher modules freely).

use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u32)] = &[
    ("model", 0),
    ("color", 0),
    ("par", 0),
    ("heap", 0),
    ("import", 1),
    ("layout", 1),
    ("lod", 2),
    ("geometry", 2),
    ("generator", 2),
    ("pick", 3),
    ("view", 4),
    ("summary", 5),
    ("render", 5),
    ("export", 6),
    ("app", 7),
];

/// Modules that must build without a GPU stack.
const GPU_FREE: &[&str] = &[
    "model",
    "color",
    "par",
    "heap",
    "import",
    "layout",
    "lod",
    "geometry",
    "generator",
    "pick",
    "view",
    "summary",
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

/// The source files of top-level module `m` (`src/m.rs` or `src/m/**.rs`).
fn files(m: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file = if m == "generator" {
        src.join("gen.rs")
    } else {
        src.join(format!("{m}.rs"))
    };
    if file.exists() {
        return vec![file];
    }
    let mut out = Vec::new();
    let mut stack = vec![src.join(m)];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `text` without comment lines and without `#[cfg(test)]` items (braces matched, outside
/// string and character literals).
fn code_outside_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            // Skip the item: up to the line where its braces balance again.
            let mut depth = 0i64;
            let mut opened = false;
            for l in lines.by_ref() {
                let (d, o) = brace_delta(l);
                depth += d;
                opened |= o;
                if opened && depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Net braces of a line (outside literals and line comments), and whether it opens one.
fn brace_delta(line: &str) -> (i64, bool) {
    let (mut d, mut opened) = (0, false);
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => break,
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'{' => {
                d += 1;
                opened = true;
            }
            b'}' => d -= 1,
            _ => {}
        }
        i += 1;
    }
    (d, opened)
}

/// The top-level modules `code` names as `crate::m`.
fn uses(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let name: String = rest[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
        rest = &rest[i + 7..];
    }
    out
}

#[test]
fn no_module_imports_one_from_a_higher_layer() {
    let mut wrong = Vec::new();
    for &(m, l) in LAYERS {
        for f in files(m) {
            let code = code_outside_tests(&std::fs::read_to_string(&f).unwrap());
            for u in uses(&code) {
                match layer(&u) {
                    Some(ul) if ul > l => wrong.push(format!(
                        "{} (layer {l}) uses crate::{u} (layer {ul})",
                        f.display()
                    )),
                    Some(_) => {}
                    None => wrong.push(format!(
                        "{} uses crate::{u}, which has no layer here",
                        f.display()
                    )),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

#[test]
fn the_core_never_names_the_gpu_stack() {
    let mut wrong = Vec::new();
    for m in GPU_FREE {
        for f in files(m) {
            let code = code_outside_tests(&std::fs::read_to_string(&f).unwrap());
            for line in code.lines() {
                for gpu in ["wgpu", "winit", "glyphon"] {
                    let hit = line.match_indices(gpu).any(|(i, _)| {
                        let before = line[..i].chars().next_back();
                        let after = line[i + gpu.len()..].chars().next();
                        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                    if hit {
                        wrong.push(format!("{}: {gpu} in `{}`", f.display(), line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the GPU-free core names the GPU stack:\n{}",
        wrong.join("\n")
    );
}

/// The checks above see what they must: a test item is skipped, code after it is not.
#[test]
fn the_scanner_skips_tests_and_comments_only() {
    let src = "use crate::view::X;\n// crate::app in a comment\n#[cfg(test)]\nmod tests {\n    fn f() { let s = \"}\"; }\n    use crate::app;\n}\nfn g() { crate::render::x(); }\n";
    let code = code_outside_tests(src);
    assert_eq!(uses(&code), ["view", "render"]);
    assert_eq!(brace_delta("let c = '{'; {"), (1, true));
}
