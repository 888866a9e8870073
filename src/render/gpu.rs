//! The wgpu instance, adapter, device and queue, chosen the way wgpu users expect.
//!
//! Selection, in order: `--backend` (vulkan or gl) if given, else `WGPU_BACKEND`;
//! `WGPU_ADAPTER_NAME` (a case-insensitive substring of the adapter name) if set; else
//! wgpu's default request with `WGPU_POWER_PREF`, then a fallback (software) adapter.
//! A machine without a GPU still gets one from Mesa: llvmpipe through GL/EGL, or lavapipe
//! through Vulkan when `mesa-vulkan-drivers` is installed. When there is no adapter at all,
//! the error says so and what to install, and lists what was found. An offscreen device
//! (`scorch render`) on a machine with no GPU device node asks Vulkan (Metal, DX12) first
//! and starts GL only when that finds nothing: there GL could only be llvmpipe.

use std::fmt;

/// A graphics API to restrict adapter selection to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Vulkan (on a machine without a GPU: Mesa lavapipe).
    Vulkan,
    /// OpenGL / GLES through EGL (on a machine without a GPU: Mesa llvmpipe).
    Gl,
}

impl Backend {
    fn bits(self) -> wgpu::Backends {
        match self {
            Backend::Vulkan => wgpu::Backends::VULKAN,
            Backend::Gl => wgpu::Backends::GL,
        }
    }
}

/// Why no device could be created.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter matched.
    #[error(
        "no GPU adapter found ({tried}). scorch draws with wgpu, which needs a Vulkan, GL, Metal \
         or DX12 driver; on Linux without a GPU install Mesa's software drivers \
         (Debian/Ubuntu: apt-get install mesa-vulkan-drivers libegl1 libgl1-mesa-dri){found}"
    )]
    NoAdapter {
        /// The backends and filters that were tried.
        tried: String,
        /// Adapters present but filtered out, if any.
        found: String,
    },
    /// The adapter refused the device.
    #[error("the GPU adapter '{adapter}' could not create a device: {detail}")]
    Device {
        /// Adapter name.
        adapter: String,
        /// wgpu's message.
        detail: String,
    },
    /// The adapter lacks something scorch needs.
    #[error(
        "the GPU adapter '{adapter}' lacks {missing}; try another with --backend or WGPU_ADAPTER_NAME"
    )]
    Unsupported {
        /// Adapter name.
        adapter: String,
        /// What is missing.
        missing: String,
    },
    /// The device could not allocate what a profile needs.
    #[error(
        "the GPU '{adapter}' has no room for {what} (about {mib} MiB): {detail}. \
         Try a GPU with more memory, or a smaller part of the input"
    )]
    OutOfMemory {
        /// Adapter name.
        adapter: String,
        /// What was being uploaded.
        what: String,
        /// Its size.
        mib: u64,
        /// wgpu's message.
        detail: String,
    },
    /// The device refused an operation (a validation error) while allocating.
    #[error("the GPU '{adapter}' refused {what}: {detail}")]
    Refused {
        /// Adapter name.
        adapter: String,
        /// What was being done.
        what: String,
        /// wgpu's message.
        detail: String,
    },
}

/// How to choose the adapter.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Restrict to one API; `None` honours `WGPU_BACKEND` or tries all.
    pub backend: Option<Backend>,
}

/// An open device.
pub struct Gpu {
    /// The wgpu instance (needed to create window surfaces).
    pub instance: wgpu::Instance,
    /// The chosen adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.describe())
            .finish()
    }
}

/// Features scorch cannot draw without.
pub const REQUIRED_FEATURES: wgpu::Features = wgpu::Features::IMMEDIATES;
/// Optional features asked for on an adapter of this type. Where the "GPU" draws from the
/// CPU's memory (llvmpipe/lavapipe, integrated GPUs), instance buffers are mapped and
/// filled in place ([`Gpu::maps_instances`]): a buffer mapped at creation otherwise gets
/// a staging buffer that the queue copies at unmap, for a 1 GB profile 217 MiB written
/// twice (and as much again held while it lasts) to land in the same RAM.
fn shared_memory_features(t: wgpu::DeviceType) -> wgpu::Features {
    match t {
        wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu => {
            wgpu::Features::MAPPABLE_PRIMARY_BUFFERS
        }
        _ => wgpu::Features::empty(),
    }
}

/// Bytes of immediate data the bar pipeline uses.
pub const IMMEDIATE_BYTES: u32 = 32;

impl Gpu {
    /// Opens a device for offscreen rendering.
    pub fn new(opts: &GpuOptions) -> Result<Gpu, GpuError> {
        pollster::block_on(Self::new_async(opts, None))
    }

    /// The wgpu instance for `opts`; `display` is the window system connection when a
    /// window will be drawn into (GL on Wayland/X11 needs it).
    pub fn instance(
        opts: &GpuOptions,
        display: Option<Box<dyn wgpu::wgt::WgpuHasDisplayHandle>>,
    ) -> wgpu::Instance {
        let mut desc = match display {
            Some(d) => wgpu::InstanceDescriptor::new_with_display_handle_from_env(d),
            None => wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
        };
        if let Some(b) = opts.backend {
            desc.backends = b.bits();
        }
        wgpu::Instance::new(desc)
    }

    /// Opens a device for offscreen rendering.
    pub async fn new_async(
        opts: &GpuOptions,
        display: Option<Box<dyn wgpu::wgt::WgpuHasDisplayHandle>>,
    ) -> Result<Gpu, GpuError> {
        // A machine with no GPU device node can have GL only through Mesa's llvmpipe, a
        // software adapter like Vulkan's lavapipe, which wgpu picks over it anyway; starting
        // EGL for it cost the device thread 17 ms of a 57 ms opening on llvmpipe. So an
        // offscreen device with no backend asked for tries Vulkan (Metal, DX12) first, and
        // every backend only when that finds no adapter.
        if display.is_none()
            && opts.backend.is_none()
            && wgpu::Backends::from_env().is_none()
            && !gpu_device_nodes()
        {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
            desc.backends = wgpu::Backends::PRIMARY;
            match Self::with_instance(wgpu::Instance::new(desc), opts, None).await {
                Err(GpuError::NoAdapter { .. }) => {}
                opened => return opened,
            }
        }
        let instance = Self::instance(opts, display);
        Self::with_instance(instance, opts, None).await
    }

    /// Opens a device on `instance`, able to present to `surface` when given.
    pub async fn with_instance(
        instance: wgpu::Instance,
        opts: &GpuOptions,
        surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<Gpu, GpuError> {
        let backends = match opts.backend {
            Some(b) => b.bits(),
            None => wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all()),
        };
        let adapter = match std::env::var("WGPU_ADAPTER_NAME") {
            Ok(want) if !want.is_empty() => {
                let want_lc = want.to_lowercase();
                let all = instance.enumerate_adapters(backends).await;
                let names: Vec<String> = all.iter().map(describe_adapter).collect();
                all.into_iter()
                    .filter(|a| surface.is_none_or(|s| a.is_surface_supported(s)))
                    .find(|a| a.get_info().name.to_lowercase().contains(&want_lc))
                    .ok_or_else(|| GpuError::NoAdapter {
                        tried: format!("{}, WGPU_ADAPTER_NAME={want:?}", backend_names(backends)),
                        found: found_list(&names),
                    })?
            }
            _ => {
                let power_preference = wgpu::PowerPreference::from_env().unwrap_or_default();
                let first = instance
                    .request_adapter(&wgpu::RequestAdapterOptions {
                        power_preference,
                        force_fallback_adapter: false,
                        compatible_surface: surface,
                        apply_limit_buckets: false,
                    })
                    .await;
                match first {
                    Ok(a) => a,
                    Err(_) => instance
                        .request_adapter(&wgpu::RequestAdapterOptions {
                            power_preference,
                            force_fallback_adapter: true,
                            compatible_surface: surface,
                            apply_limit_buckets: false,
                        })
                        .await
                        .map_err(|_| GpuError::NoAdapter {
                            tried: backend_names(backends),
                            found: String::new(),
                        })?,
                }
            }
        };

        let info = adapter.get_info();
        let features = adapter.features();
        if !features.contains(REQUIRED_FEATURES) {
            return Err(GpuError::Unsupported {
                adapter: describe_adapter(&adapter),
                missing: format!("features {:?}", REQUIRED_FEATURES - features),
            });
        }
        let limits = adapter.limits();
        if limits.max_immediate_size < IMMEDIATE_BYTES {
            return Err(GpuError::Unsupported {
                adapter: describe_adapter(&adapter),
                missing: format!("{IMMEDIATE_BYTES} bytes of immediate data"),
            });
        }
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("scorch"),
                // Timestamp queries, where offered, give the frame-time overlay GPU times;
                // mappable instance buffers where the GPU's memory is the CPU's.
                required_features: REQUIRED_FEATURES
                    | (features & wgpu::Features::TIMESTAMP_QUERY)
                    | (features & shared_memory_features(info.device_type)),
                // Everything the adapter offers: large textures and buffers let exports
                // use fewer tiles and big profiles fewer instance chunks.
                required_limits: limits,
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| GpuError::Device {
                adapter: info.name.clone(),
                detail: e.to_string(),
            })?;
        // An error outside the checked operations (a window frame's growing buffers, the
        // glyph atlas, the surface) is said, not wgpu's default panic: the window goes on
        // and the next frame tries again. The first few are logged, then every 1000th.
        let seen = std::sync::atomic::AtomicU64::new(0);
        device.on_uncaptured_error(std::sync::Arc::new(move |e: wgpu::Error| {
            let n = seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n < 5 || n.is_multiple_of(1000) {
                let what = match e {
                    wgpu::Error::OutOfMemory { .. } => "out of GPU memory",
                    _ => "GPU error",
                };
                eprintln!("scorch: {what} ({} so far): {e}", n + 1);
            }
        }));
        Ok(Gpu {
            instance,
            adapter,
            device,
            queue,
        })
    }

    /// Whether buffers the shaders read may be mapped for writing (the device draws from
    /// the CPU's memory): bar instances are then written in place, with no staging copy.
    pub fn maps_instances(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
    }

    /// Runs `upload` (which allocates GPU memory for `what`, about `bytes`) inside an
    /// out-of-memory error scope, so a profile too big for the device gives a message
    /// instead of wgpu's default handler aborting the process. A validation error in the
    /// same scope (using what an allocation that failed returned, most often) is an error
    /// too; the out-of-memory one is reported first.
    pub fn allocating<T>(
        &self,
        what: &str,
        bytes: u64,
        upload: impl FnOnce() -> T,
    ) -> Result<T, GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = upload();
        let invalid = pollster::block_on(invalid.pop());
        if let Some(e) = pollster::block_on(oom.pop()) {
            return Err(GpuError::OutOfMemory {
                adapter: self.describe(),
                what: what.to_string(),
                mib: bytes >> 20,
                detail: e.to_string(),
            });
        }
        match invalid {
            None => Ok(out),
            Some(e) => Err(GpuError::Refused {
                adapter: self.describe(),
                what: what.to_string(),
                detail: e.to_string(),
            }),
        }
    }

    /// "name (backend, device type)", for logs and `--verbose`.
    pub fn describe(&self) -> String {
        describe_adapter(&self.adapter)
    }

    /// Largest texture side the device accepts.
    pub fn max_texture_side(&self) -> u32 {
        self.device.limits().max_texture_dimension_2d
    }
}

/// Whether this machine may have a GPU that a driver could draw with: on Linux, a device
/// node of a GPU's kernel driver in `/dev` (or `/dev` unreadable); elsewhere, always.
fn gpu_device_nodes() -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_dir("/dev") {
            Ok(entries) => entries
                .flatten()
                .any(|e| is_gpu_node(&e.file_name().to_string_lossy())),
            Err(_) => true,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Whether `/dev/<name>` belongs to a GPU's kernel driver: DRM (`dri/`: Mesa's hardware
/// drivers), NVIDIA's, WSL's `dxg`, Mali, Adreno (`kgsl`), Vivante (`galcore`), PowerVR.
fn is_gpu_node(name: &str) -> bool {
    const PREFIXES: [&str; 7] = ["dri", "nvidia", "dxg", "mali", "kgsl", "galcore", "pvr"];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// "Vulkan, GL" for a set of backends.
fn backend_names(b: wgpu::Backends) -> String {
    let known = [
        (wgpu::Backends::VULKAN, "Vulkan"),
        (wgpu::Backends::GL, "GL"),
        (wgpu::Backends::METAL, "Metal"),
        (wgpu::Backends::DX12, "DX12"),
        (wgpu::Backends::BROWSER_WEBGPU, "WebGPU"),
    ];
    let names: Vec<&str> = known
        .iter()
        .filter(|(f, _)| b.contains(*f))
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "no backend".to_string()
    } else {
        format!("tried {}", names.join(", "))
    }
}

fn describe_adapter(a: &wgpu::Adapter) -> String {
    let i = a.get_info();
    format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
}

fn found_list(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!("; adapters present: {}", names.join(", "))
    }
}

/// What differs between scorch's render pipelines. Each is one WGSL module with a
/// `vs_main` and an `fs_main`, drawing into one color target without depth.
pub(crate) struct PipelineSpec<'a> {
    /// The pipeline's name in wgpu's messages: `{label}::pipeline`.
    pub label: &'a str,
    pub layout: &'a wgpu::PipelineLayout,
    pub shader: &'a wgpu::ShaderModule,
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub format: wgpu::TextureFormat,
    pub blend: Option<wgpu::BlendState>,
    pub topology: wgpu::PrimitiveTopology,
}

/// The render pipeline `spec` describes.
pub(crate) fn render_pipeline(device: &wgpu::Device, spec: PipelineSpec) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(&format!("{}::pipeline", spec.label)),
        layout: Some(spec.layout),
        vertex: wgpu::VertexState {
            module: spec.shader,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: spec.buffers,
        },
        fragment: Some(wgpu::FragmentState {
            module: spec.shader,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: spec.format,
                blend: spec.blend,
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        primitive: wgpu::PrimitiveState {
            topology: spec.topology,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        multiview_mask: None,
        cache: None,
    })
}

/// A uniform buffer of `size` bytes, written with `queue.write_buffer`.
pub(crate) fn uniform_buffer(device: &wgpu::Device, label: &str, size: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPU drivers' device nodes are told from the rest of `/dev` (a machine without any
    /// opens its offscreen device without starting GL).
    #[test]
    fn gpu_device_nodes_are_told_apart() {
        for gpu in [
            "dri",
            "nvidia0",
            "nvidiactl",
            "nvidia-uvm",
            "dxg",
            "mali0",
            "kgsl-3d0",
            "galcore",
            "pvr_sync",
        ] {
            assert!(is_gpu_node(gpu), "{gpu}");
        }
        for other in [
            "null",
            "tty0",
            "sda",
            "vda1",
            "kvm",
            "fb0",
            "drm_dp_aux0",
            "input",
            "shm",
            "vfio",
        ] {
            assert!(!is_gpu_node(other), "{other}");
        }
    }
}
