//! Card declarations of the device tools: ids, titles, descriptions, argument and result schemas.
//! The `connector_channel_id` argument is injected by `protocol::card::with_connector_channel_id`.

use std::sync::OnceLock;

use serde_json::json;

use crate::protocol::card::ToolDecl;

/// The tools this build implements (ids are the wire contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolId {
    /// `android_device_status`
    DeviceStatus,
    /// `android_screenshot`
    Screenshot,
    /// `android_ui_tree`
    UiTree,
    /// `android_tap`
    Tap,
    /// `android_input_text`
    InputText,
    /// `android_press_key`
    PressKey,
}

impl ToolId {
    /// Every tool, in card order.
    pub const ALL: [ToolId; 6] = [
        ToolId::DeviceStatus,
        ToolId::Screenshot,
        ToolId::UiTree,
        ToolId::Tap,
        ToolId::InputText,
        ToolId::PressKey,
    ];

    /// The wire id.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolId::DeviceStatus => "android_device_status",
            ToolId::Screenshot => "android_screenshot",
            ToolId::UiTree => "android_ui_tree",
            ToolId::Tap => "android_tap",
            ToolId::InputText => "android_input_text",
            ToolId::PressKey => "android_press_key",
        }
    }

    /// Parses a wire id.
    pub fn from_wire(id: &str) -> Option<ToolId> {
        ToolId::ALL.into_iter().find(|t| t.as_str() == id)
    }
}

/// Keys of `android_press_key` (closed set) and their Android keycodes
/// (`android.view.KeyEvent`, frameworks/base/core/java/android/view/KeyEvent.java).
pub const KEYS: &[(&str, u32)] = &[
    ("home", 3),
    ("back", 4),
    ("enter", 66),
    ("recents", 187),
    ("delete", 67),
    ("tab", 61),
    ("space", 62),
    ("escape", 111),
    ("dpad_up", 19),
    ("dpad_down", 20),
    ("dpad_left", 21),
    ("dpad_right", 22),
    ("dpad_center", 23),
    ("volume_up", 24),
    ("volume_down", 25),
    ("volume_mute", 164),
    ("power", 26),
    ("wake", 224),
    ("sleep", 223),
    ("menu", 82),
    ("search", 84),
    ("paste", 279),
    ("copy", 278),
    ("cut", 277),
    ("select_all", 29),
];

const COORDS: &str = "Coordinates are device pixels in the current display's input space (the `wm size` Override size when set, else Physical; rotation applied), origin top-left — the same space as an android_screenshot image at full size and android_ui_tree bounds.";

fn decls() -> Vec<ToolDecl> {
    let key_names: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
    vec![
        ToolDecl {
            tool_id: "android_device_status",
            title: "Android device status",
            description: "Read the bound phone's model, manufacturer, Android release and SDK, battery percent, whether the screen is on, display size (px) and the foreground app package. No side effects.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {}}),
            output_schema: json!({"type": "object", "properties": {
                "model": {"type": "string"}, "manufacturer": {"type": "string"},
                "android_release": {"type": "string"}, "sdk": {"type": ["integer", "null"]},
                "battery_percent": {"type": ["integer", "null"]}, "screen_on": {"type": ["boolean", "null"]},
                "display": {"type": "object"}, "foreground_package": {"type": ["string", "null"]}
            }}),
        },
        ToolDecl {
            tool_id: "android_screenshot",
            title: "Take a screenshot",
            description: "Capture the bound phone's screen as PNG. Returns a file_ref and a relative download_url (the image is never inline), mime_type, width and height (px), byte_size (bytes) and expires_at (Unix ms). No side effects.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {}}),
            output_schema: json!({"type": "object", "required": ["file_ref", "download_url", "mime_type", "width", "height", "byte_size", "expires_at"]}),
        },
        ToolDecl {
            tool_id: "android_ui_tree",
            title: "Read the UI tree",
            description: "Dump the on-screen accessibility tree (uiautomator) as a flat list of meaningful elements: element_id, class, text, content_desc, resource_id, bounds [left, top, right, bottom] and center [x, y] in device px, clickable, focusable, focused, enabled. No side effects. Fails with ui_dump_failed rather than returning an empty screen.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {
                "max_nodes": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Most elements to return (default 300)."}
            }}),
            output_schema: json!({"type": "object", "required": ["elements"]}),
        },
        ToolDecl {
            tool_id: "android_tap",
            title: "Tap the screen",
            description: format_static_tap(),
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["x", "y"], "properties": {
                "x": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "X in device px."},
                "y": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Y in device px."}
            }}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_input_text",
            title: "Type text",
            description: "Type text into the focused field of the bound phone, exactly as given (every character is passed as data, never as shell syntax; `%s` is typed literally; a newline presses Enter). This version types printable ASCII; other characters are refused with unsupported_text. Tap a text field first.",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Text to type."}
            }}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_press_key",
            title: "Press a key",
            description: "Press one key on the bound phone (home, back, enter, recents, delete, …).",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["key"], "properties": {
                "key": {"type": "string", "enum": key_names, "description": "Key to press."},
                "long_press": {"type": "boolean", "description": "Hold the key (long press)."}
            }}),
            output_schema: json!({"type": "object"}),
        },
    ]
}

fn format_static_tap() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        format!("Tap once at (x, y) on the bound phone. {COORDS} Coordinates outside the display are refused with out_of_bounds naming the valid range.")
    })
}

/// The declarations, in [`ToolId::ALL`] order.
pub fn catalog() -> &'static [ToolDecl] {
    static CATALOG: OnceLock<Vec<ToolDecl>> = OnceLock::new();
    CATALOG.get_or_init(decls)
}

/// The declaration of one tool.
pub fn tool_decl(tool: ToolId) -> &'static ToolDecl {
    let idx = ToolId::ALL.iter().position(|t| *t == tool).unwrap_or(0);
    &catalog()[idx]
}
