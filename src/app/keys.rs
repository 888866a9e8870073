//! winit's keys, modifiers and wheel deltas as scorch's own ([`crate::view::input`]).

use crate::view::input::{Key, Mods, WheelDelta};
use winit::dpi::PhysicalPosition;
use winit::event::MouseScrollDelta;
use winit::keyboard::{Key as WKey, ModifiersState, NamedKey};

/// The key `k` as the key table knows it.
pub fn key(k: &WKey) -> Key {
    match k {
        WKey::Character(c) => Key::Char(c.to_string()),
        WKey::Named(n) => match n {
            NamedKey::Escape => Key::Escape,
            NamedKey::Enter => Key::Enter,
            NamedKey::Backspace => Key::Backspace,
            NamedKey::Delete => Key::Delete,
            NamedKey::ArrowLeft => Key::Left,
            NamedKey::ArrowRight => Key::Right,
            NamedKey::ArrowUp => Key::Up,
            NamedKey::ArrowDown => Key::Down,
            NamedKey::PageUp => Key::PageUp,
            NamedKey::PageDown => Key::PageDown,
            NamedKey::Home => Key::Home,
            NamedKey::End => Key::End,
            NamedKey::F12 => Key::F12,
            _ => Key::Other,
        },
        _ => Key::Other,
    }
}

/// The modifiers held (Command counts as Control).
pub fn mods(m: ModifiersState) -> Mods {
    Mods {
        ctrl: m.control_key() || m.super_key(),
        shift: m.shift_key(),
        alt: m.alt_key(),
    }
}

/// A wheel movement.
pub fn wheel(d: MouseScrollDelta) -> WheelDelta {
    match d {
        MouseScrollDelta::LineDelta(x, y) => WheelDelta::Lines(x, y),
        MouseScrollDelta::PixelDelta(PhysicalPosition { x, y }) => WheelDelta::Pixels(x, y),
    }
}
