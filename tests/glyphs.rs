//! Text drawn as instanced glyph quads (`render::glyphs`) has glyphon's pixels: the same
//! strings drawn by glyphon's renderer and by scorch's text layer give identical images,
//! at fractional positions, clipped, on both layers; labels cut to fit (drawn from their
//! name's run) match the cut string shaped by itself, and so do names drawn by id,
//! whole or cut; and the caches stay bounded.

mod common;

use common::gpu;
use glyphon::{
    Attrs, Buffer, Cache, Color, Family, Metrics, Resolution, Shaping, SwashCache, TextArea,
    TextAtlas, TextBounds, TextRenderer, Viewport, Wrap,
};
use scorch::model::Names;
use scorch::render::text::{FONT_FAMILY, Layer, TextLayer, font_system};
use scorch::render::{Gpu, TARGET_FORMAT};
use scorch::view::draw::{Label, LabelFit, Measure, NameFit, line_height};

const W: u32 = 480;
const H: u32 = 160;

/// (text, size, left, top, clip, color)
type Case = (&'static str, f32, f32, f32, [f32; 4], [u8; 3]);

fn cases() -> Vec<Case> {
    let all = [0.0, 0.0, W as f32, H as f32];
    vec![
        ("main.work", 12.0, 4.0, 2.0, all, [0, 0, 0]),
        ("task::step_417", 11.0, 10.3, 20.0, all, [20, 30, 200]),
        (
            "AVATAR Wolf, fi fl — µs",
            13.0,
            7.62,
            38.0,
            all,
            [200, 0, 0],
        ),
        ("73 ns", 11.0, 300.87, 58.0, all, [0, 0, 0]),
        ("12.5 µs", 11.0, 120.5, 58.0, all, [255, 255, 255]),
        // Clipped left, right, top and bottom.
        (
            "clipped::at_both_ends()",
            12.0,
            20.25,
            80.0,
            [40.0, 84.0, 110.0, 92.0],
            [0, 90, 0],
        ),
        ("x\\ny \\u{1b} 中文", 12.0, 200.4, 100.0, all, [60, 60, 60]),
        ("partly outside", 12.0, -14.6, 120.0, all, [0, 0, 0]),
        ("bottom edge", 12.0, 300.0, (H - 8) as f32, all, [0, 0, 0]),
    ]
}

fn target(gpu: &Gpu) -> wgpu::Texture {
    gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("glyphs::target"),
        size: wgpu::Extent3d {
            width: W,
            height: H,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: TARGET_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// Clears a target to light grey, lets `draw` fill the pass, and reads the pixels back.
fn draw_into(gpu: &Gpu, draw: impl FnOnce(&mut wgpu::RenderPass<'_>)) -> Vec<u8> {
    let tex = target(gpu);
    let view = tex.create_view(&wgpu::TextureViewDescriptor::default());
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: None,
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.8,
                        g: 0.8,
                        b: 0.8,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        draw(&mut pass);
    }
    let row = (W * 4).next_multiple_of(256);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: u64::from(row * H),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    enc.copy_texture_to_buffer(
        tex.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: None,
            },
        },
        tex.size(),
    );
    gpu.queue.submit([enc.finish()]);
    let bytes = scorch::render::read_buffer(gpu, &buffer, u64::from(row * H));
    bytes
        .chunks(row as usize)
        .flat_map(|r| r[..(W * 4) as usize].to_vec())
        .collect()
}

/// The cases drawn by glyphon, each string shaped whole, as scorch drew text before.
fn with_glyphon(gpu: &Gpu, cases: &[Case]) -> Vec<u8> {
    let (device, queue) = (&gpu.device, &gpu.queue);
    let mut fs = font_system();
    let cache = Cache::new(device);
    let mut atlas = TextAtlas::with_color_mode(
        device,
        queue,
        &cache,
        TARGET_FORMAT,
        glyphon::ColorMode::Web,
    );
    let mut renderer =
        TextRenderer::new(&mut atlas, device, wgpu::MultisampleState::default(), None);
    let mut viewport = Viewport::new(device, &cache);
    viewport.update(
        queue,
        Resolution {
            width: W,
            height: H,
        },
    );
    let buffers: Vec<Buffer> = cases
        .iter()
        .map(|c| {
            let mut b = Buffer::new(&mut fs, Metrics::new(c.1, line_height(c.1)));
            b.set_wrap(Wrap::None);
            b.set_size(None, None);
            let attrs = Attrs::new().family(Family::Name(FONT_FAMILY));
            b.set_text(c.0, &attrs, Shaping::Advanced, None);
            b.shape_until_scroll(&mut fs, false);
            b
        })
        .collect();
    let areas = cases.iter().zip(&buffers).map(|(c, b)| TextArea {
        buffer: b,
        left: c.2,
        top: c.3,
        scale: 1.0,
        bounds: TextBounds {
            left: c.4[0].floor() as i32,
            top: c.4[1].floor() as i32,
            right: c.4[2].ceil() as i32,
            bottom: c.4[3].ceil() as i32,
        },
        default_color: Color::rgb(c.5[0], c.5[1], c.5[2]),
        custom_glyphs: &[],
    });
    let mut swash = SwashCache::new();
    renderer
        .prepare(
            device, queue, &mut fs, &mut atlas, &viewport, areas, &mut swash,
        )
        .unwrap();
    draw_into(gpu, |pass| {
        renderer.render(&atlas, &viewport, pass).unwrap()
    })
}

/// The cases drawn by scorch's text layer (numbers a character at a time, cut labels
/// from their name's run), half of them on the overlay layer.
fn with_layer(gpu: &Gpu, layer: &mut TextLayer, cases: &[Case]) -> Vec<u8> {
    layer.clear();
    for (i, c) in cases.iter().enumerate() {
        let on = if i % 2 == 0 {
            Layer::Base
        } else {
            Layer::Overlay
        };
        layer.push_on(on, &Label::from(c.0), c.1, c.2, c.3, c.4, c.5);
    }
    layer.prepare(&gpu.device, &gpu.queue, W, H).unwrap();
    draw_into(gpu, |pass| {
        layer.render(pass, Layer::Base).unwrap();
        layer.render(pass, Layer::Overlay).unwrap();
    })
}

fn differing(a: &[u8], b: &[u8]) -> usize {
    a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count()
}

#[test]
fn glyph_quads_draw_what_glyphon_draws() {
    let Some(gpu) = gpu() else { return };
    let cases = cases();
    let want = with_glyphon(gpu, &cases);
    let inked = want.chunks(4).filter(|p| p[0] != 204).count();
    assert!(inked > 1500, "the reference draws text ({inked} pixels)");
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    // Twice: the second frame draws from the runs and atlas slots the first made.
    for frame in 0..2 {
        let got = with_layer(gpu, &mut layer, &cases);
        assert_eq!(differing(&got, &want), 0, "frame {frame}");
    }
}

#[test]
fn cut_labels_draw_as_the_cut_string_shaped_alone() {
    let Some(gpu) = gpu() else { return };
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    let names = [
        "task::step_417::handle_request",
        "com.example.Service.RequestHandler",
        "AVATAR Wolf offload",
    ];
    let mut cut: Vec<(String, f32)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        for (j, part) in [LabelFit::Head, LabelFit::Tail].into_iter().enumerate() {
            for (k, w) in [40.0f32, 77.5, 121.0].into_iter().enumerate() {
                let t = layer.cut(part, name, 11.0, w).unwrap();
                let x = 4.0 + 150.0 * k as f32 + 0.37 * (i + j) as f32;
                cut.push((t, x));
            }
        }
    }
    let leaked: Vec<Case> = cut
        .iter()
        .enumerate()
        .map(|(n, (t, x))| {
            let t: &'static str = Box::leak(t.clone().into_boxed_str());
            let y = 2.0 + 16.0 * (n / 3) as f32;
            (t, 11.0, *x, y, [0.0, 0.0, W as f32, H as f32], [0, 0, 0])
        })
        .collect();
    assert!(leaked.iter().any(|c| c.0.ends_with('…')));
    assert!(leaked.iter().any(|c| c.0.starts_with('…')));
    let want = with_glyphon(gpu, &leaked);
    let got = with_layer(gpu, &mut layer, &leaked);
    assert_eq!(differing(&got, &want), 0);
}

/// However many strings and sizes are drawn, the glyph table and the atlas stay within
/// their limits, and text drawn afterwards still matches glyphon.
#[test]
fn glyph_atlas_and_tables_stay_bounded() {
    let Some(gpu) = gpu() else { return };
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    for round in 0..40 {
        layer.clear();
        for i in 0..60 {
            let size = 8.0 + ((round * 60 + i) % 97) as f32 * 0.5;
            let text = format!("ÀÉÎÕÜ wgpu {round} {i} ŁŽЖЯ");
            layer.push_on(
                Layer::Base,
                &Label::from(text.as_str()),
                size,
                (i % 6) as f32 * 80.3,
                (i / 6) as f32 * 16.0,
                [0.0, 0.0, W as f32, H as f32],
                [0, 0, 0],
            );
        }
        layer.prepare(&gpu.device, &gpu.queue, W, H).unwrap();
        let (glyphs, side) = layer.atlas();
        assert!(glyphs <= scorch::render::glyphs::MAX_GLYPHS, "{glyphs}");
        assert!(side <= 8192, "{side}");
    }
    let cases = cases();
    let want = with_glyphon(gpu, &cases);
    assert_eq!(differing(&with_layer(gpu, &mut layer, &cases), &want), 0);
}

/// A window frame has names shaped ahead on a thread: once they have arrived, a frame
/// that may shape nothing at all measures and draws every name (nothing left for a later
/// frame), with the widths an export measures and glyphon's pixels.
#[test]
fn names_shaped_ahead_draw_as_names_shaped_in_the_frame() {
    let Some(gpu) = gpu() else { return };
    let size = 12.0;
    let cases: Vec<Case> = cases()
        .into_iter()
        // Names; numbers are drawn a character at a time, from runs of their own.
        .filter(|c| c.0.starts_with(char::is_alphabetic))
        .map(|c| (c.0, size, c.2, c.3, c.4, c.5))
        .collect();
    let mut names = scorch::model::Names::new();
    let ids: Vec<_> = cases.iter().map(|c| names.intern(c.0)).collect();
    // A second interner drawn beside it (a comparison's other side): both are shaped.
    let mut other = scorch::model::Names::new();
    let other_ids: Vec<_> = (0..3000)
        .map(|i| other.intern(&format!("other::side_{i}")))
        .collect();
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    layer.begin_frame(Some(std::time::Duration::ZERO));
    layer.names_ahead(&other, size);
    layer.names_ahead(&names, size);
    assert!(layer.shaping_ahead());
    let t = std::time::Instant::now();
    while layer.shaping_ahead() {
        assert!(t.elapsed().as_secs() < 60, "the names arrive");
        std::thread::sleep(std::time::Duration::from_millis(2));
        layer.begin_frame(Some(std::time::Duration::ZERO));
    }
    let mut export = TextLayer::new(&gpu.device, TARGET_FORMAT);
    for &id in other_ids.iter().step_by(97) {
        assert_eq!(
            layer.name_width(&other, id, size),
            export.width(other.get(id), size)
        );
    }
    assert_eq!(
        layer.deferred(),
        0,
        "the other side's names were all shaped ahead"
    );
    for (c, &id) in cases.iter().zip(&ids) {
        assert_eq!(
            layer.name_width(&names, id, size),
            export.width(c.0, size),
            "{}",
            c.0
        );
    }
    let got = with_layer(gpu, &mut layer, &cases);
    assert_eq!(
        layer.deferred(),
        0,
        "a frame that may shape nothing left nothing"
    );
    let want = with_glyphon(gpu, &cases);
    assert_eq!(differing(&got, &want), 0);
}

/// Names drawn by id ([`Label::name`], and cut by [`Measure::name_fit`]) are drawn from
/// the run kept for each name: the pixels of the string they show, shaped alone, in the
/// frame that shapes them and in the next one, which only finds them.
#[test]
fn name_labels_draw_as_the_strings_they_show() {
    let Some(gpu) = gpu() else { return };
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    let mut names = Names::default();
    let ids: Vec<_> = [
        "task::step_417::handle_request",
        "com.example.Service.RequestHandler",
        "AVATAR Wolf offload",
        "tab\\there",
        "0.5",
    ]
    .iter()
    .map(|n| names.intern(n))
    .collect();
    // One line per name and part, one column per width.
    let mut labels: Vec<(Label, f32, f32)> = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        for (j, part) in [LabelFit::Head, LabelFit::Tail].into_iter().enumerate() {
            for (k, w) in [40.0f32, 77.5, 400.0].into_iter().enumerate() {
                let x = 4.0 + 150.0 * k as f32 + 0.37 * (i + j) as f32;
                let y = 2.0 + 16.0 * (2 * i + j) as f32;
                match layer.name_fit(part, &names, id, 11.0, w) {
                    NameFit::Whole(_) => labels.push((Label::name(&names, id), x, y)),
                    NameFit::Cut(l) => labels.push((l, x, y)),
                    NameFit::Nothing => {}
                }
            }
        }
    }
    assert!(
        labels
            .iter()
            .any(|l| l.0.name_label().is_some_and(|n| n.cut.is_some()))
    );
    assert!(labels.iter().any(|l| l.0.shown().starts_with('…')));
    let shown: Vec<Case> = labels
        .iter()
        .map(|(l, x, y)| {
            let t: &'static str = Box::leak(l.shown().into_owned().into_boxed_str());
            (t, 11.0, *x, *y, [0.0, 0.0, W as f32, H as f32], [0, 0, 0])
        })
        .collect();
    let want = with_glyphon(gpu, &shown);
    for frame in 0..2 {
        layer.clear();
        for (l, c) in labels.iter().map(|l| &l.0).zip(&shown) {
            layer.push_on(Layer::Base, l, c.1, c.2, c.3, c.4, c.5);
        }
        layer.prepare(&gpu.device, &gpu.queue, W, H).unwrap();
        let got = draw_into(gpu, |pass| layer.render(pass, Layer::Base).unwrap());
        assert_eq!(differing(&got, &want), 0, "frame {frame}");
    }
}

/// A window frame drawn while the view moves gives its labels a deadline: a label loop
/// may go on while the time spent, plus what the texts placed and the rest of the frame
/// took in recent timed frames, ends before it; the bars left are counted until the
/// next frame begins. Exports and frames at rest have no deadline, and teach nothing.
#[test]
fn a_moving_frame_counts_its_texts_against_the_deadline() {
    use std::time::{Duration, Instant};
    let Some(gpu) = gpu() else { return };
    let mut layer = TextLayer::new(&gpu.device, TARGET_FORMAT);
    layer.begin_frame(None);
    assert!(!layer.labels_timed());
    assert!(layer.labels_in_time(usize::MAX));
    // A frame at rest that took an hour teaches nothing.
    layer.note_drawing(
        Duration::from_secs(3600),
        100,
        Instant::now() + Duration::from_secs(7200),
    );
    // Timed frames whose texts took 10 µs each, and whose rest took 2 ms: then 2000
    // texts (20 ms) and the rest fit in 50 ms, and 5000 more do not.
    let timed_frame = |layer: &mut TextLayer, drawing: Duration, texts: usize, rest: Duration| {
        layer.begin_frame(Some(Duration::from_millis(1)));
        layer.limit_labels(Some(Duration::from_secs(1)));
        assert!(layer.labels_in_time(0));
        layer.end_frame();
        layer.note_drawing(drawing, texts, Instant::now() + drawing + rest);
    };
    for _ in 0..40 {
        timed_frame(
            &mut layer,
            Duration::from_millis(1),
            100,
            Duration::from_millis(2),
        );
    }
    layer.begin_frame(Some(Duration::from_millis(1)));
    layer.limit_labels(Some(Duration::from_millis(50)));
    assert!(layer.labels_timed());
    assert!(layer.labels_in_time(2000));
    assert!(!layer.labels_in_time(5000));
    layer.leave_labels(7);
    assert_eq!(layer.labels_left(), 7);
    // The rest of the frame alone can use up the time.
    for _ in 0..40 {
        timed_frame(&mut layer, Duration::ZERO, 0, Duration::from_millis(60));
    }
    layer.begin_frame(Some(Duration::from_millis(1)));
    assert_eq!(
        layer.labels_left(),
        0,
        "a new frame starts with nothing left"
    );
    layer.limit_labels(Some(Duration::from_millis(50)));
    assert!(!layer.labels_in_time(0));
    // The frame's end lifts the deadline.
    layer.end_frame();
    assert!(!layer.labels_timed());
    assert!(layer.labels_in_time(usize::MAX));
}
