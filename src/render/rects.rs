//! Solid rectangles (`shaders/rects.wgsl`): backgrounds, legend swatches, outlines.
//!
//! Rectangles are collected per frame on the CPU (there are few) and uploaded into one
//! growable instance buffer before the pass.

use super::gpu::{PipelineSpec, render_pipeline, uniform_buffer};
use bytemuck::{Pod, Zeroable};

/// One rectangle. Mirrors `Instance` in `shaders/rects.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RectInstance {
    /// `rect: vec4<f32>` (`@location(0)`): left, top, width, height in target pixels.
    pub rect: [f32; 4],
    /// `color: vec4<f32>` (`@location(1)`): sRGB with straight alpha.
    pub color: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<RectInstance>() == 32);

/// Mirrors `Globals` in `shaders/rects.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct RectGlobals {
    target_size: [f32; 2],
    _pad: [f32; 2],
}

/// The rectangle pipeline and its per-frame buffers.
pub struct RectPipeline {
    pipeline: wgpu::RenderPipeline,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    capacity: u64,
    count: u32,
}

impl RectPipeline {
    /// Compiles `rects.wgsl` for `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> RectPipeline {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("RectPipeline::shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/rects.wgsl").into()),
        });
        let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("RectPipeline::bind_layout"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("RectPipeline::layout"),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        const ATTRS: [wgpu::VertexAttribute; 2] =
            wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x4];
        let pipeline = render_pipeline(
            device,
            PipelineSpec {
                label: "RectPipeline",
                layout: &layout,
                shader: &shader,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<RectInstance>() as u64,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &ATTRS,
                })],
                format,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                topology: wgpu::PrimitiveTopology::TriangleStrip,
            },
        );
        let globals = uniform_buffer(
            device,
            "RectPipeline::globals",
            std::mem::size_of::<RectGlobals>(),
        );
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("RectPipeline::bind_group"),
            layout: &bind_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: globals.as_entire_binding(),
            }],
        });
        let capacity = 256;
        let instances = Self::instance_buffer(device, capacity);
        RectPipeline {
            pipeline,
            globals,
            bind_group,
            instances,
            capacity,
            count: 0,
        }
    }

    fn instance_buffer(device: &wgpu::Device, capacity: u64) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("RectPipeline::instances"),
            size: capacity * std::mem::size_of::<RectInstance>() as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Uploads this frame's rectangles for a target of `size` pixels.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: [f32; 2],
        rects: &[RectInstance],
    ) {
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&RectGlobals {
                target_size: size,
                _pad: [0.0; 2],
            }),
        );
        if rects.len() as u64 > self.capacity {
            self.capacity = (rects.len() as u64).next_power_of_two();
            self.instances = Self::instance_buffer(device, self.capacity);
        }
        if !rects.is_empty() {
            queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(rects));
        }
        self.count = rects.len() as u32;
    }

    /// Draws the prepared rectangles `range` (indices into the slice given to `prepare`).
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>, range: std::ops::Range<u32>) {
        let range = range.start.min(self.count)..range.end.min(self.count);
        if range.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        pass.draw(0..4, range);
    }
}
