//! Every `.wgsl` in `shaders/` goes through naga's WGSL parser and validator, the same
//! front end wgpu uses, so a broken shader fails `cargo test` on any machine, GPU or not.

use std::path::Path;

/// What scorch asks of the device: immediates (the per-row parameters of bars.wgsl).
fn capabilities() -> naga::valid::Capabilities {
    naga::valid::Capabilities::IMMEDIATES
}

#[test]
fn every_shader_parses_and_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("shaders/ exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("wgsl") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string_with_path(&src, &name)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string_with_path(&src, &name)));
        // Every pipeline shader exposes the entry points the Rust side names.
        let entry_points: Vec<&str> = module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        let expected: &[&str] = if name == "name_hash.wgsl" {
            &["cs_main"]
        } else {
            &["vs_main", "fs_main"]
        };
        for e in expected {
            assert!(entry_points.contains(e), "{name} lacks entry point {e}");
        }
        checked.push(name);
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "bars.wgsl",
            "blit.wgsl",
            "glyphs.wgsl",
            "name_hash.wgsl",
            "rects.wgsl"
        ]
    );
}

#[test]
fn a_broken_shader_is_caught() {
    // The validator really rejects things: a type error must not pass.
    let src = "@fragment fn fs_main() -> @location(0) vec4<f32> { return 1u; }";
    let module = naga::front::wgsl::parse_str(src).unwrap();
    assert!(
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities())
            .validate(&module)
            .is_err()
    );
}

/// The palette is written down in three places that must agree: `PALETTE` in
/// src/color.rs (uploaded), the `palette` array of `Globals` and `PALETTE_LEN` (the
/// modulus of the color rule, `hash % 24` as in Pyroscope) in shaders/bars.wgsl.
#[test]
fn bars_shader_palette_has_the_reference_length() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/bars.wgsl");
    let module = naga::front::wgsl::parse_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let globals = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("Globals"))
        .expect("bars.wgsl declares Globals");
    let naga::TypeInner::Struct { members, .. } = &globals.1.inner else {
        panic!("Globals is a struct");
    };
    let palette = members
        .iter()
        .find(|m| m.name.as_deref() == Some("palette"))
        .expect("Globals has a palette");
    let naga::TypeInner::Array {
        size: naga::ArraySize::Constant(n),
        ..
    } = module.types[palette.ty].inner
    else {
        panic!("Globals.palette is a fixed-size array");
    };
    assert_eq!(n.get() as usize, scorch::color::PALETTE.len());
    let len = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some("PALETTE_LEN"))
        .expect("bars.wgsl declares PALETTE_LEN");
    let naga::Expression::Literal(naga::Literal::U32(modulus)) =
        module.global_expressions[len.1.init]
    else {
        panic!("PALETTE_LEN is a u32 literal");
    };
    assert_eq!(modulus as usize, scorch::color::PALETTE.len());
}
