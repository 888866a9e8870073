//! scorch: a native, GPU-rendered viewer for performance profiles.
pub mod color;
pub mod export;
pub mod import;
pub mod layout;
pub mod model;
pub mod pick;
pub mod render;
pub mod view;
