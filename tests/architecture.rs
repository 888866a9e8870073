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
    // Files of test modules (`#[cfg(test)] mod tests;`) are test code.
    let tests: Vec<PathBuf> = out.iter().flat_map(|f| test_module_files(f)).collect();
    out.retain(|f| !tests.contains(f));
    out.sort();
    out
}

/// The files of the modules `file` declares as `#[cfg(test)] mod name;`.
fn test_module_files(file: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
        file.parent().expect("in a directory").to_path_buf()
    } else {
        file.with_extension("")
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| w[1].strip_prefix("mod ")?.strip_suffix(';'))
        .flat_map(|name| {
            [
                dir.join(format!("{name}.rs")),
                dir.join(name).join("mod.rs"),
            ]
        })
        .collect()
}

/// `text` without comments and without `#[cfg(test)]` items (braces matched outside
/// string, raw string, byte string and character literals, which may span lines).
fn code_outside_tests(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    // Where the current line's code starts (for `#[cfg(test)]` at a line's start).
    let mut line_start = true;
    while i < b.len() {
        if line_start
            && text[i..]
                .trim_start_matches([' ', '\t'])
                .starts_with("#[cfg(test)]")
        {
            i = end_of_item(b, i + text[i..].find("#[cfg(test)]").unwrap_or(0) + 12);
            line_start = false;
            continue;
        }
        let end = end_of_token(b, i);
        let token = &text[i..end];
        if !(token.starts_with("//") || token.starts_with("/*")) {
            out.push_str(token);
        } else if token.starts_with("//") {
            out.push('\n');
        }
        if token.ends_with('\n') {
            line_start = true;
        } else if !token.trim().is_empty() {
            line_start = false;
        }
        i = end;
    }
    out
}

/// The end of the token at `i`: a comment (a line comment with its newline), a string,
/// raw string or character literal, or one other byte.
fn end_of_token(b: &[u8], i: usize) -> usize {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    match at(i) {
        b'/' if at(i + 1) == b'/' => b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |n| i + n + 1),
        b'/' if at(i + 1) == b'*' => {
            // Block comments nest.
            let (mut depth, mut k) = (0, i);
            while k < b.len() {
                if at(k) == b'/' && at(k + 1) == b'*' {
                    depth += 1;
                    k += 2;
                } else if at(k) == b'*' && at(k + 1) == b'/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        return k;
                    }
                } else {
                    k += 1;
                }
            }
            b.len()
        }
        // r"…", r#"…"#, br"…", cr#"…"# (not the end of an identifier such as `for`).
        b'b' | b'c' | b'r' if i == 0 || !ident(at(i - 1)) => {
            let mut k = i + usize::from(at(i) != b'r');
            if at(k) != b'r' {
                return if at(i) != b'r' && at(i + 1) == b'"' {
                    end_of_token(b, i + 1)
                } else {
                    i + 1
                };
            }
            k += 1;
            let hashes = b[k..].iter().take_while(|&&c| c == b'#').count();
            k += hashes;
            if at(k) != b'"' {
                return i + 1;
            }
            k += 1;
            while k < b.len() {
                if at(k) == b'"'
                    && b[k + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == b'#')
                        .count()
                        == hashes
                {
                    return k + 1 + hashes;
                }
                k += 1;
            }
            b.len()
        }
        b'"' => {
            let mut k = i + 1;
            while k < b.len() && at(k) != b'"' {
                k += if at(k) == b'\\' { 2 } else { 1 };
            }
            (k + 1).min(b.len())
        }
        // A character literal ('{', '\'', '\u{7b}'); a lifetime is one byte.
        b'\'' if at(i + 2) == b'\'' => i + 3,
        b'\'' if at(i + 1) == b'\\' => b[i + 2..]
            .iter()
            .position(|&c| c == b'\'')
            .map_or(b.len(), |n| i + 2 + n + 1),
        // One character (all its bytes).
        _ => i + 1 + b[i + 1..].iter().take_while(|&&c| c & 0xC0 == 0x80).count(),
    }
}

/// The end of the item that starts after an attribute at `i`: its matching `}` (braces
/// counted outside literals and comments), or its `;` when it has no braces.
fn end_of_item(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0i64;
    while i < b.len() {
        let end = end_of_token(b, i);
        if end == i + 1 {
            match b[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth <= 0 {
                        return end;
                    }
                }
                b';' if depth == 0 => return end,
                _ => {}
            }
        }
        i = end;
    }
    b.len()
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

/// A test module in a file of its own is test code; the module declaring it is not.
#[test]
fn test_module_files_are_left_out() {
    let import = files("import");
    let has = |p: &str| import.iter().any(|f| f.ends_with(p));
    assert!(has("import/flamebearer.rs") && has("import/speedscope/lift.rs"));
    assert!(!has("import/flamebearer/tests.rs") && !has("import/speedscope/tests.rs"));
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
    // Raw strings (quotes and braces inside, over lines), character literals, block
    // comments and lifetimes do not end a test item early, nor hide code after it.
    let src = concat!(
        "#[cfg(test)]\nmod tests {\n    const A: &str = r#\"{\"a\": \"}\"\n  }\"#;\n",
        "    const B: &[u8] = br\"}\";\n    fn f<'a>(c: char) -> bool { c == '}' || c == '\\'' }\n",
        "    /* } */ use crate::app;\n}\n",
        "fn g() { crate::render::x(); } // crate::export\n/* crate::pick */\n",
        "#[cfg(test)]\nuse crate::view;\nfn h() { crate::lod::y() }\n",
    );
    assert_eq!(uses(&code_outside_tests(src)), ["render", "lod"]);
}
