//! Opening the device on a thread of its own, while the input loads.
//!
//! Opening a device (tens of milliseconds on llvmpipe, loading drivers and LLVM) and
//! compiling the pipelines and loading the font do not depend on the input, so the window
//! and `scorch render` both start them at once on a [`Warmup`] thread and pick the result
//! up when they need it: the window when the device arrives (it draws nothing before),
//! `scorch render` when the input is laid out.
//!
//! When: a large input is parsed on every core, and a third thread would only slow the
//! parsers down; what follows the parse (merging per-thread trees, finishing the tree,
//! layout, level of detail) runs mostly on one core. So with [`Hold::UntilParsed`] the
//! thread waits on the load's [`Progress`] (a condition variable, woken by each update)
//! until the input is small, nine tenths of it are parsed, or the load is over, then
//! opens the device while the rest of the load and the layout run. A machine of many
//! cores ([`OPEN_AT_ONCE_CORES`]) opens it at once: there a third thread costs the parse
//! little, and a device that takes longer to open than the load (a discrete GPU's driver)
//! would keep the export waiting.
//!
//! A warm-up that is dropped unused still joins its thread (after releasing the hold):
//! exiting while a driver initialises on another thread would run the driver's exit
//! handlers under it.

use super::frame::{Renderer, TARGET_FORMAT};
use super::gpu::{Gpu, GpuError, GpuOptions};
use crate::import::{Gives, Progress};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Drawing done on the device thread once the renderer is made, before the device is
/// handed over: `scorch render` draws a tiny image of the kind the input gives (a flame
/// graph or a trace; both while its format is not known: `crate::export::prime`), so that
/// the driver compiles its shader variants while the input still loads. Only for inputs
/// large enough to hold the device back ([`HOLD_BACK_MIN_BYTES`]): the rest of their
/// load outlasts it, where a small input would wait for it.
pub type Prime = fn(&Gpu, &mut Renderer, Option<Gives>);

/// Inputs at least this large have the device opened near the end of their parse.
pub const HOLD_BACK_MIN_BYTES: u64 = 96 << 20;

/// Whether an input of `total` bytes has the device opened near the end of its parse
/// (on a machine of few cores: [`OPEN_AT_ONCE_CORES`]).
fn holds_back(total: u64) -> bool {
    total >= HOLD_BACK_MIN_BYTES
}

/// Machines with at least this many cores open the device at once, whatever the input:
/// beside a parse on every core, the device thread slows it by about a core's share, so
/// little on many cores, while holding it back can leave the load waiting for it. On a
/// 16-core machine an NVIDIA driver took 150–170 ms to open; a 200 MB folded file of few
/// distinct stacks was parsed and laid out in 154 ms, then waited 112 ms for it.
pub const OPEN_AT_ONCE_CORES: usize = 8;

/// Whether the device thread may open the device when `done` of the input's `total`
/// bytes are parsed, on a machine of `cores` cores.
fn released(total: u64, done: u64, cores: usize) -> bool {
    total > 0 && (!holds_back(total) || cores >= OPEN_AT_ONCE_CORES || done >= total / 10 * 9)
}

/// When the thread may open the device.
#[derive(Clone)]
pub enum Hold {
    /// At once.
    No,
    /// When the load `Progress` says the input is small or nine tenths parsed, or the
    /// load is over.
    UntilParsed(Arc<Progress>),
}

impl Hold {
    fn wait(&self) {
        if let Hold::UntilParsed(p) = self {
            let cores = crate::par::cores();
            p.wait_until(|p| {
                let total = p.total.load(std::sync::atomic::Ordering::Relaxed);
                let done = p.done.load(std::sync::atomic::Ordering::Relaxed);
                released(total, done, cores)
            });
        }
    }

    /// Whether the device opens while a large input is still loading: then the load
    /// leaves the thread time for a [`Prime`]; a small input would wait for it.
    fn leaves_time(&self) -> bool {
        match self {
            Hold::No => false,
            Hold::UntilParsed(p) => holds_back(p.total.load(std::sync::atomic::Ordering::Relaxed)),
        }
    }

    /// What the input gives, once its format is known.
    fn gives(&self) -> Option<Gives> {
        match self {
            Hold::No => None,
            Hold::UntilParsed(p) => p.gives(),
        }
    }

    fn release(&self) {
        if let Hold::UntilParsed(p) = self {
            p.finish();
        }
    }
}

/// A window's surface to open the device for (the adapter must be able to present to it).
pub struct SurfaceTarget {
    /// The instance the surface was made with.
    pub instance: wgpu::Instance,
    /// The surface.
    pub surface: wgpu::Surface<'static>,
    /// Its size in physical pixels.
    pub size: (u32, u32),
}

/// A surface configured for the device.
pub struct Surface {
    /// The surface.
    pub surface: wgpu::Surface<'static>,
    /// Its configuration.
    pub config: wgpu::SurfaceConfiguration,
    /// The format frames draw into (a non-sRGB view of the surface's format).
    pub view_format: wgpu::TextureFormat,
}

/// What the warm-up produced.
pub struct Opened {
    /// The device.
    pub gpu: Gpu,
    /// A renderer for the surface's format, or for [`TARGET_FORMAT`] without a surface.
    pub renderer: Renderer,
    /// The configured surface.
    pub surface: Option<Surface>,
    /// Time spent waiting for the hold to release.
    pub held: Duration,
    /// Opening the adapter and device.
    pub open: Duration,
    /// Compiling the pipelines and loading the font.
    pub pipelines: Duration,
    /// The [`Prime`] drawing.
    pub primed: Duration,
}

/// Why the warm-up failed.
#[derive(Debug, thiserror::Error)]
pub enum WarmupError {
    /// No device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The adapter cannot present to the window.
    #[error("the adapter {0} cannot present to this window")]
    CannotPresent(String),
    /// The thread died.
    #[error("the device thread stopped unexpectedly")]
    Thread,
}

/// A device being opened on a thread of its own.
pub struct Warmup {
    rx: Option<mpsc::Receiver<Result<Opened, WarmupError>>>,
    handle: Option<std::thread::JoinHandle<()>>,
    hold: Hold,
}

impl Warmup {
    /// Starts opening a device with `opts` (for `surface` when given), once `hold`
    /// allows, then draws `prime` with it; `ready` runs on the thread when the result is
    /// there (a window wakes its event loop with it).
    pub fn start(
        opts: GpuOptions,
        surface: Option<SurfaceTarget>,
        hold: Hold,
        prime: Option<Prime>,
        ready: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Warmup> {
        let (tx, rx) = mpsc::channel();
        let thread_hold = hold.clone();
        let handle = std::thread::Builder::new()
            .name("scorch-device".into())
            .spawn(move || {
                let t_start = Instant::now();
                thread_hold.wait();
                let prime = prime
                    .filter(|_| thread_hold.leaves_time())
                    .map(|f| (f, thread_hold.gives()));
                let result = open(&opts, surface, prime, t_start);
                let _ = tx.send(result);
                ready();
            })?;
        Ok(Warmup {
            rx: Some(rx),
            handle: Some(handle),
            hold,
        })
    }

    /// The load is over (or failed): open the device now if it waits.
    pub fn release(&self) {
        self.hold.release();
    }

    /// Waits for the device.
    pub fn wait(mut self) -> Result<Opened, WarmupError> {
        self.release();
        let rx = self.rx.take().ok_or(WarmupError::Thread)?;
        let out = rx.recv().map_err(|_| WarmupError::Thread)?;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        out
    }

    /// The device, if it is there (without waiting).
    pub fn try_take(&mut self) -> Option<Result<Opened, WarmupError>> {
        let out = match self.rx.as_ref()?.try_recv() {
            Ok(r) => r,
            Err(mpsc::TryRecvError::Empty) => return None,
            Err(mpsc::TryRecvError::Disconnected) => Err(WarmupError::Thread),
        };
        self.rx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        Some(out)
    }
}

impl Drop for Warmup {
    fn drop(&mut self) {
        self.release();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn open(
    opts: &GpuOptions,
    target: Option<SurfaceTarget>,
    prime: Option<(Prime, Option<Gives>)>,
    t_start: Instant,
) -> Result<Opened, WarmupError> {
    let t0 = Instant::now();
    let (gpu, surface) = match target {
        None => (Gpu::new(opts)?, None),
        Some(t) => {
            let gpu = pollster::block_on(Gpu::with_instance(t.instance, opts, Some(&t.surface)))?;
            let s = configure(&gpu, t.surface, t.size)?;
            (gpu, Some(s))
        }
    };
    let open = t0.elapsed();
    let format = surface.as_ref().map_or(TARGET_FORMAT, |s| s.view_format);
    let mut renderer = Renderer::new(&gpu, format);
    let pipelines = t0.elapsed() - open;
    let t1 = Instant::now();
    if let Some((prime, gives)) = prime {
        prime(&gpu, &mut renderer, gives);
    }
    Ok(Opened {
        gpu,
        renderer,
        surface,
        held: t0 - t_start,
        open,
        pipelines,
        primed: t1.elapsed(),
    })
}

/// Configures `surface` for `gpu`: a non-sRGB format (colors are sRGB values, as in a
/// browser canvas), or a non-sRGB view of an sRGB one; vsync.
fn configure(
    gpu: &Gpu,
    surface: wgpu::Surface<'static>,
    size: (u32, u32),
) -> Result<Surface, WarmupError> {
    let caps = surface.get_capabilities(&gpu.adapter);
    let format = caps
        .formats
        .iter()
        .copied()
        .find(|f| !f.is_srgb())
        .or_else(|| caps.formats.first().copied())
        .unwrap_or(wgpu::TextureFormat::Bgra8Unorm);
    let view_format = format.remove_srgb_suffix();
    let Some(mut config) = surface.get_default_config(&gpu.adapter, size.0.max(1), size.1.max(1))
    else {
        return Err(WarmupError::CannotPresent(gpu.describe()));
    };
    config.format = format;
    config.view_formats = if view_format != format {
        vec![view_format]
    } else {
        vec![]
    };
    config.present_mode = wgpu::PresentMode::AutoVsync;
    surface.configure(&gpu.device, &config);
    Ok(Surface {
        surface,
        config,
        view_format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When the device may open: a large input's parse nine tenths through on a machine
    /// of few cores; at once for a small input, or on a machine of many cores.
    #[test]
    fn the_hold_depends_on_the_input_and_the_cores() {
        let big = HOLD_BACK_MIN_BYTES * 2;
        for cores in [1, 2, 4, OPEN_AT_ONCE_CORES - 1] {
            assert!(!released(0, 0, cores), "nothing known yet");
            assert!(!released(big, big / 2, cores), "{cores} cores, half parsed");
            assert!(released(big, big / 10 * 9, cores), "{cores} cores, 9/10");
            assert!(released(1 << 20, 0, cores), "{cores} cores, a small input");
        }
        for cores in [OPEN_AT_ONCE_CORES, 16, 128] {
            assert!(!released(0, 0, cores), "nothing known yet");
            assert!(released(big, 0, cores), "{cores} cores: at once");
        }
    }

    /// The hold keeps the device closed until the parse is far enough, without polling.
    #[test]
    fn the_hold_releases_on_progress_or_at_the_end() {
        let p = Arc::new(Progress::default());
        p.set_total(HOLD_BACK_MIN_BYTES * 2);
        let hold = Hold::UntilParsed(p.clone());
        let (tx, rx) = mpsc::channel();
        let h = std::thread::spawn(move || {
            hold.wait();
            tx.send(()).unwrap();
        });
        p.set_done(HOLD_BACK_MIN_BYTES);
        // (A machine of many cores opens the device at once.)
        let cores = crate::par::cores();
        if cores < OPEN_AT_ONCE_CORES {
            assert!(
                rx.recv_timeout(Duration::from_millis(50)).is_err(),
                "half parsed: still held"
            );
        }
        p.set_done(HOLD_BACK_MIN_BYTES * 2 / 10 * 9);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("nine tenths parsed: released");
        h.join().unwrap();
        // A small input, or a load that ended, releases at once.
        let small = Arc::new(Progress::default());
        small.set_total(10);
        Hold::UntilParsed(small).wait();
        let failed = Arc::new(Progress::default());
        failed.finish();
        Hold::UntilParsed(failed).wait();
    }
}
