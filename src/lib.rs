//! scorch: a native, GPU-rendered viewer for performance profiles and traces.
//!
//! The data flow, top to bottom (each stage is a module; everything above `render` is
//! plain Rust without wgpu, winit or glyphon, tested and benchmarked without a GPU;
//! `ARCHITECTURE.md` has the layers and how to add a view):
//!
//! ```text
//! bytes (file | stdin | .gz)     import   decode (gzip, UTF-16), detect the format from the
//!                                          content, parse; errors name file and position
//!   -> Document                  model    a Profile (interned names, aggregated call tree,
//!                                          what a tick is) or a Trace (spans and their tree)
//!   -> View                      view     flame graph or timeline: owns its layout (layout),
//!                                          level of detail (lod), camera/scroll/zoom
//!                                          (view::state), hover (pick), search
//!   -> Frame                     view     draw data: rectangles, text, per-row bar ranges,
//!                                          the overview; the frame shell around it
//!   -> GPU                       render   bars uploaded once per layout; a frame runs the
//!                                          draw data through its layers into one pass
//!   -> PNG                       export   offscreen, tiled past the texture limit
//!   -> window                    app      winit: input -> session -> view -> frames
//! ```
//!
//! `geometry` places things on the image; `summary` is `scorch info`; `generator` writes
//! the synthetic workloads of `TARGETS.md` (for benchmarks and `scorch gen`). `color`
//! holds the CPU reference of everything the shaders compute (palette, hash keys, diff
//! gradient, heat ramp), so tests can compare rendered pixels with it.

pub mod app;
pub mod color;
pub mod export;
pub mod geometry;
// `gen` is a reserved keyword in edition 2024, so the module has a longer name.
#[path = "gen.rs"]
pub mod generator;
pub mod heap;
pub mod import;
pub mod layout;
pub mod lod;
pub mod model;
pub mod par;
pub mod pick;
pub mod render;
pub mod summary;
#[cfg(test)]
mod testing;
pub mod view;
