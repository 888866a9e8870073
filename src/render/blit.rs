//! Copies a texture 1:1 onto the target (`shaders/blit.wgsl`): the timeline's overview
//! strip is drawn once into a texture and blitted every frame.

use super::gpu::{PipelineSpec, render_pipeline, uniform_buffer};
use bytemuck::{Pod, Zeroable};

/// Mirrors `Globals` in `shaders/blit.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct BlitGlobals {
    /// `target_size: vec2<f32>`.
    target_size: [f32; 2],
    _pad: [f32; 2],
    /// `rect: vec4<f32>`: left, top, width, height in target pixels.
    rect: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<BlitGlobals>() == 32);

/// The blit pipeline.
pub struct BlitPipeline {
    pipeline: wgpu::RenderPipeline,
    bind_layout: wgpu::BindGroupLayout,
    globals: wgpu::Buffer,
}

/// A texture ready to be blitted.
pub struct BlitSource {
    bind_group: wgpu::BindGroup,
}

impl BlitPipeline {
    /// Compiles `blit.wgsl` for targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> BlitPipeline {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("BlitPipeline::shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/blit.wgsl").into()),
        });
        let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("BlitPipeline::bind_layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("BlitPipeline::layout"),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let pipeline = render_pipeline(
            device,
            PipelineSpec {
                label: "BlitPipeline",
                layout: &layout,
                shader: &shader,
                buffers: &[],
                format,
                blend: None,
                topology: wgpu::PrimitiveTopology::TriangleStrip,
            },
        );
        let globals = uniform_buffer(
            device,
            "BlitPipeline::globals",
            std::mem::size_of::<BlitGlobals>(),
        );
        BlitPipeline {
            pipeline,
            bind_layout,
            globals,
        }
    }

    /// Binds `view` (a texture of the pipeline's format) for blitting.
    pub fn source(&self, device: &wgpu::Device, view: &wgpu::TextureView) -> BlitSource {
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("BlitPipeline::source"),
            layout: &self.bind_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.globals.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(view),
                },
            ],
        });
        BlitSource { bind_group }
    }

    /// Sets where the next blit goes: `rect` (left, top, width, height) on a target of
    /// `target_size` pixels.
    pub fn prepare(&self, queue: &wgpu::Queue, target_size: [f32; 2], rect: [f32; 4]) {
        queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&BlitGlobals {
                target_size,
                _pad: [0.0; 2],
                rect,
            }),
        );
    }

    /// Draws `src` where [`prepare`](Self::prepare) said.
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>, src: &BlitSource) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &src.bind_group, &[]);
        pass.draw(0..4, 0..1);
    }
}
