//! The bars a window or export holds on the GPU, by [`SceneKey`].
//!
//! A view names the bars it draws from ([`View::bar_sources`]); [`Scenes::sync`] uploads
//! those not held yet (inside an out-of-memory scope: a profile too big for the device
//! gets a message, not an abort) and drops those no view names any more. A loader thread
//! builds the first ones off the UI thread ([`Scenes::build`]).
//!
//! [`View::bar_sources`]: crate::view::View::bar_sources

use super::bars::{BarScene, PageBudget};
use super::gpu::{Gpu, GpuError};
use crate::view::draw::{BarSource, BarsLayer, SceneKey};

/// Uploaded scenes.
#[derive(Default)]
pub struct Scenes {
    held: Vec<(SceneKey, BarScene)>,
}

impl Scenes {
    /// No scenes.
    pub fn new() -> Scenes {
        Scenes::default()
    }

    /// Uploads `sources`.
    pub fn build(
        gpu: &Gpu,
        bind_layout: &wgpu::BindGroupLayout,
        sources: &[BarSource<'_>],
    ) -> Result<Scenes, GpuError> {
        let mut s = Scenes::new();
        s.sync(gpu, bind_layout, sources)?;
        Ok(s)
    }

    /// Holds exactly `sources`: uploads the missing ones, drops the others.
    pub fn sync(
        &mut self,
        gpu: &Gpu,
        bind_layout: &wgpu::BindGroupLayout,
        sources: &[BarSource<'_>],
    ) -> Result<(), GpuError> {
        self.held
            .retain(|(k, _)| sources.iter().any(|s| s.key == *k));
        for src in sources {
            if self.get(src.key).is_some() {
                continue;
            }
            let scene = gpu.allocating(&src.describe(), src.estimated_bytes(), || {
                BarScene::build(gpu, bind_layout, src)
            })??;
            self.held.push((src.key, scene));
        }
        Ok(())
    }

    /// Whether `layers` (a frame's) draw rows' own bars their scenes have not got: the
    /// cheap test before [`fetch`](Self::fetch), which needs the views' sources.
    pub fn lack_pages(&self, layers: &[BarsLayer<'_>]) -> bool {
        layers
            .iter()
            .any(|l| self.get(l.scene).is_some_and(|s| s.lacks_pages(&l.rows)))
    }

    /// Uploads the pages of rows' own bars that `layers` (a frame's) draw and their
    /// scenes lack ([`BarScene::fetch`]), as many as `budget` allows in all
    /// ([`PageBudget::ALL`] for a picture that must be exact). Returns the pages still
    /// missing.
    pub fn fetch(
        &mut self,
        gpu: &Gpu,
        sources: &[BarSource<'_>],
        layers: &[BarsLayer<'_>],
        budget: PageBudget,
    ) -> Result<usize, GpuError> {
        let mut missing = 0;
        let mut done = 0;
        for layer in layers {
            let src = sources.iter().find(|s| s.key == layer.scene);
            let held = self.held.iter_mut().find(|(k, _)| *k == layer.scene);
            if let (Some(src), Some((_, scene))) = (src, held) {
                missing += scene.fetch(gpu, src, &layer.rows, budget, &mut done)?;
            }
        }
        Ok(missing)
    }

    /// Whether every one of `sources` is held.
    pub fn holds(&self, sources: &[BarSource<'_>]) -> bool {
        sources.iter().all(|s| self.get(s.key).is_some())
    }

    /// The scene of `key`.
    pub fn get(&self, key: SceneKey) -> Option<&BarScene> {
        self.held.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
    }

    /// Bytes of instances uploaded.
    pub fn instance_bytes(&self) -> u64 {
        self.held.iter().map(|(_, s)| s.instance_bytes).sum()
    }

    /// Every byte the scenes hold on the GPU: instances, name hashes and search flags,
    /// uniform blocks.
    pub fn gpu_bytes(&self) -> u64 {
        self.held.iter().map(|(_, s)| s.gpu_bytes).sum()
    }
}
