//! GPU frame time from timestamp queries, where the adapter offers them.
//!
//! Two timestamps bracket the frame's render pass; they are resolved and copied to a
//! mappable buffer, and read back on a later frame without stalling (the readback is only
//! started when the previous one has been consumed).

use super::gpu::Gpu;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const READY: u8 = 2;

/// Measures how long the GPU spends on a frame's pass.
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    state: Arc<AtomicU8>,
    period_ns: f32,
    armed: bool,
}

impl GpuTimer {
    /// A timer, or `None` when the device has no timestamp queries.
    pub fn new(gpu: &Gpu) -> Option<GpuTimer> {
        if !gpu
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return None;
        }
        let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("GpuTimer::queries"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("GpuTimer::resolve"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("GpuTimer::readback"),
            size: 16,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Some(GpuTimer {
            queries,
            resolve,
            readback,
            state: Arc::new(AtomicU8::new(IDLE)),
            period_ns: gpu.queue.get_timestamp_period(),
            armed: false,
        })
    }

    /// Timestamp writes for this frame's pass, when a measurement can be taken.
    pub fn pass_writes(&mut self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.armed = self.state.load(Ordering::Acquire) == IDLE;
        self.armed.then_some(wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        })
    }

    /// Records the resolve and copy after the pass.
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        if self.armed {
            enc.resolve_query_set(&self.queries, 0..2, &self.resolve, 0);
            enc.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, 16);
        }
    }

    /// Starts the readback after the submit.
    pub fn after_submit(&mut self) {
        if !self.armed {
            return;
        }
        self.armed = false;
        self.state.store(PENDING, Ordering::Release);
        let state = self.state.clone();
        self.readback
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                state.store(if r.is_ok() { READY } else { IDLE }, Ordering::Release);
            });
    }

    /// The last measured GPU time in milliseconds, if a new one arrived.
    pub fn read(&mut self, gpu: &Gpu) -> Option<f32> {
        let _ = gpu.device.poll(wgpu::PollType::Poll);
        if self.state.load(Ordering::Acquire) != READY {
            return None;
        }
        let ms = {
            let view = self.readback.slice(..).get_mapped_range().ok()?;
            let t: &[u64] = bytemuck::cast_slice(&view);
            t[1].saturating_sub(t[0]) as f32 * self.period_ns / 1e6
        };
        self.readback.unmap();
        self.state.store(IDLE, Ordering::Release);
        Some(ms)
    }
}
