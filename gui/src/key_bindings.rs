//! Which key does what: winit's keyboard events turned into [`Control`]s.
//!
//! winit reports a key twice, when it goes down and when it comes up, and again and again
//! while it is held (`repeat`). Controls act on the press; holding `+` keeps doubling
//! the size, but holding Space does not start and stop the run thirty times a second.
//!
//! winit gives each key two names: the *physical* key (where it sits on the keyboard) and
//! the *logical* key (what it types with the current layout). Shortcuts that name a
//! character (`+`, `c`) use the logical key, so they follow the user's layout.

use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key, NamedKey};

use crate::app_state::Control;

// ANCHOR: control_for_key
/// The control a key event asks for, if any.
pub fn control_for_key(event: &KeyEvent) -> Option<Control> {
    if event.state != ElementState::Pressed {
        return None;
    }
    control_for_pressed_key(&event.logical_key, event.repeat)
}

/// The control for a key that went down (`repeat` while it is held).
pub fn control_for_pressed_key(key: &Key, repeat: bool) -> Option<Control> {
    let control = match key {
        Key::Named(NamedKey::Space) if !repeat => Control::ToggleRunning,
        Key::Named(NamedKey::Escape) if !repeat => Control::Quit,
        Key::Named(NamedKey::ArrowUp) => Control::Deeper,
        Key::Named(NamedKey::ArrowDown) => Control::Shallower,
        Key::Character(text) => match text.as_str() {
            // `=` is `+` without Shift on US keyboards.
            "+" | "=" => Control::LargerSize,
            "-" => Control::SmallerSize,
            "c" | "C" if !repeat => Control::ClearHistory,
            _ => return None,
        },
        _ => return None,
    };
    Some(control)
}
// ANCHOR_END: control_for_key

/// The bindings, for the help text the window shows.
pub const HELP: &str =
    "Space: start/stop   + and -: size   Up and Down: depth   C: clear   Esc: quit";

#[cfg(test)]
mod tests {
    use super::*;

    fn character(text: &str) -> Key {
        Key::Character(text.into())
    }

    #[test]
    fn keys_map_to_their_controls() {
        let space = Key::Named(NamedKey::Space);
        assert_eq!(
            control_for_pressed_key(&space, false),
            Some(Control::ToggleRunning)
        );
        assert_eq!(
            control_for_pressed_key(&character("+"), false),
            Some(Control::LargerSize)
        );
        assert_eq!(
            control_for_pressed_key(&character("-"), false),
            Some(Control::SmallerSize)
        );
        assert_eq!(
            control_for_pressed_key(&Key::Named(NamedKey::ArrowUp), false),
            Some(Control::Deeper)
        );
        assert_eq!(control_for_pressed_key(&character("x"), false), None);
    }

    #[test]
    fn holding_a_key_repeats_size_changes_but_not_start_and_stop() {
        let space = Key::Named(NamedKey::Space);
        assert_eq!(control_for_pressed_key(&space, true), None);
        assert_eq!(
            control_for_pressed_key(&character("+"), true),
            Some(Control::LargerSize)
        );
    }
}
