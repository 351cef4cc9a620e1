//! The tool registry: every tool id of the `xagent.device.v1` set for `device.adb` (a public
//! contract) and the card declarations of the tools this build implements. Declarations live with
//! their implementation (one module per tool family); `connector_channel_id` is injected by
//! `protocol::card::with_connector_channel_id`.

use std::sync::OnceLock;

use crate::protocol::card::ToolDecl;

macro_rules! tool_ids {
    ($($variant:ident => $wire:literal,)*) => {
        /// A tool id of the device tool set (wire form via [`ToolId::as_str`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolId {
            $(
                #[doc = concat!("`", $wire, "`")]
                $variant,
            )*
        }

        impl ToolId {
            /// Every id of the tool set, implemented or not.
            pub const EVERY: &'static [ToolId] = &[$(ToolId::$variant,)*];

            /// The wire id.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ToolId::$variant => $wire,)*
                }
            }
        }
    };
}

tool_ids! {
    DeviceStatus => "android_device_status",
    Screenshot => "android_screenshot",
    UiTree => "android_ui_tree",
    AppList => "android_app_list",
    Logcat => "android_logcat",
    FilePull => "android_file_pull",
    WaitFor => "android_wait_for",
    Tap => "android_tap",
    LongPress => "android_long_press",
    DoubleTap => "android_double_tap",
    Swipe => "android_swipe",
    Scroll => "android_scroll",
    InputText => "android_input_text",
    PressKey => "android_press_key",
    AppLaunch => "android_app_launch",
    AppStop => "android_app_stop",
    AppInstall => "android_app_install",
    AppUninstall => "android_app_uninstall",
    OpenUrl => "android_open_url",
    FilePush => "android_file_push",
    SetOrientation => "android_set_orientation",
    ScreenRecord => "android_screen_record",
    Shell => "android_shell",
}

impl ToolId {
    /// Parses a wire id (any id of the set; see [`tool_decl`] for whether it is in the card).
    pub fn from_wire(id: &str) -> Option<ToolId> {
        ToolId::EVERY.iter().copied().find(|t| t.as_str() == id)
    }
}

/// The declarations of the implemented tools, in card order.
pub fn catalog() -> &'static [ToolDecl] {
    static CATALOG: OnceLock<Vec<ToolDecl>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut all = super::observe::decls();
        all.extend(super::gestures::decls());
        all.extend(super::input::decls());
        all.extend(super::apps::decls());
        all.extend(super::files::decls());
        all.extend(super::logcat::decls());
        all.push(super::wait::decl());
        all.push(super::orientation::decl());
        all.push(super::record::decl());
        all.push(super::shell::decl());
        all
    })
}

/// The declaration of a tool, `None` when this build does not implement it (not in the card).
pub fn tool_decl(tool: ToolId) -> Option<&'static ToolDecl> {
    catalog().iter().find(|d| d.tool_id == tool.as_str())
}

/// The implemented tools, in card order.
pub fn card_tools() -> Vec<ToolId> {
    catalog()
        .iter()
        .filter_map(|d| ToolId::from_wire(d.tool_id))
        .collect()
}
