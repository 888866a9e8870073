//! Name hashing on the GPU (`shaders/name_hash.wgsl`).
//!
//! For every interned name the CPU prepares two keys, the bytes Pyroscope would hash: the
//! package part (chosen by the profile's `spyName`, see [`crate::color::package_name`]) and
//! the whole name. They are packed word-aligned into one storage buffer; one compute
//! dispatch writes `vec2(hash(package), hash(name))` per name, which `bars.wgsl` reads to
//! pick palette entries. Hashing per name rather than per bar keeps frames cheap however
//! many bars share a name.

use super::gpu::Gpu;
use crate::color::{package_name, pyroscope_key};
use crate::model::Names;
use bytemuck::{Pod, Zeroable};

/// Mirrors `NameKey` in `shaders/name_hash.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct NameKey {
    /// `pkg_word: u32`: word offset of the package key.
    pub pkg_word: u32,
    /// `pkg_len: u32`: byte length of the package key.
    pub pkg_len: u32,
    /// `full_word: u32`: word offset of the whole-name key.
    pub full_word: u32,
    /// `full_len: u32`: byte length of the whole-name key.
    pub full_len: u32,
}

/// Mirrors `Params` in `shaders/name_hash.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Params {
    count: u32,
    row_stride: u32,
    _pad: [u32; 2],
}

/// Keys packed for the shader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedKeys {
    /// One entry per name.
    pub keys: Vec<NameKey>,
    /// Key bytes, little-endian in words, each key starting on a word boundary.
    pub words: Vec<u32>,
}

impl PackedKeys {
    /// Appends one byte string, returning its (word offset, byte length).
    fn push(&mut self, bytes: &[u8]) -> (u32, u32) {
        let word = self.words.len() as u32;
        for c in bytes.chunks(4) {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            self.words.push(u32::from_le_bytes(w));
        }
        (word, bytes.len() as u32)
    }

    /// Packs the package and whole-name keys of each `(package, name)` pair.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> PackedKeys {
        let mut p = PackedKeys::default();
        for (pkg, name) in pairs {
            let (pkg_word, pkg_len) = p.push(&pyroscope_key(pkg));
            let (full_word, full_len) = p.push(&pyroscope_key(name));
            p.keys.push(NameKey {
                pkg_word,
                pkg_len,
                full_word,
                full_len,
            });
        }
        p
    }

    /// The keys of every name of `names`, the package part chosen by Pyroscope's
    /// `spyName` rules for `spy`.
    pub fn for_names(names: &Names, spy: Option<&str>) -> PackedKeys {
        PackedKeys::from_pairs(
            names
                .iter()
                .map(|(_, name)| (package_name(spy, name), name)),
        )
    }
}

/// Per-name hashes, resident on the GPU.
#[derive(Clone, Debug)]
pub struct NameHashes {
    buffer: wgpu::Buffer,
    count: u32,
}

const WORKGROUP: u32 = 64;

impl NameHashes {
    /// Hashes prepared keys on the GPU.
    pub fn compute_packed(gpu: &Gpu, packed: &PackedKeys) -> NameHashes {
        use wgpu::util::DeviceExt;
        let device = &gpu.device;
        let count = packed.keys.len() as u32;
        let empty_key = [NameKey::default()];
        let empty_word = [0u32];
        let keys = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("NameHashes::keys"),
            contents: if packed.keys.is_empty() {
                bytemuck::cast_slice(&empty_key)
            } else {
                bytemuck::cast_slice(&packed.keys)
            },
            usage: wgpu::BufferUsages::STORAGE,
        });
        let words = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("NameHashes::key_words"),
            contents: if packed.words.is_empty() {
                bytemuck::cast_slice(&empty_word)
            } else {
                bytemuck::cast_slice(&packed.words)
            },
            usage: wgpu::BufferUsages::STORAGE,
        });
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("NameHashes::hashes"),
            size: u64::from(count.max(1)) * 8,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let max_x = device.limits().max_compute_workgroups_per_dimension.max(1);
        let groups = count.div_ceil(WORKGROUP).max(1);
        let gx = groups.min(max_x);
        let gy = groups.div_ceil(gx);
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("NameHashes::params"),
            contents: bytemuck::bytes_of(&Params {
                count,
                row_stride: gx * WORKGROUP,
                _pad: [0; 2],
            }),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("NameHashes::shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/name_hash.wgsl").into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("NameHashes::pipeline"),
            layout: None,
            module: &shader,
            entry_point: Some("cs_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("NameHashes::bind_group"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: keys.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: words.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: params.as_entire_binding(),
                },
            ],
        });
        let mut enc = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("NameHashes::encoder"),
        });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("NameHashes::pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        gpu.queue.submit([enc.finish()]);
        NameHashes { buffer, count }
    }

    /// The storage buffer `bars.wgsl` reads.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Reads the hashes back (tests and diagnostics): `(package hash, name hash)` per name.
    pub fn read(&self, gpu: &Gpu) -> Vec<[u32; 2]> {
        let bytes = super::read_buffer(gpu, &self.buffer, u64::from(self.count) * 8);
        bytemuck::cast_slice::<u8, [u32; 2]>(&bytes).to_vec()
    }
}
