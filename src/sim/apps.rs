//! The installed apps and the screens they draw. Activity names are the real ones of AOSP
//! apps (`com.android.settings/.Settings`, `com.android.deskclock/.DeskClock`); the Notes app is
//! the sim's own test app.

use crate::ui::{Action, Node, Rect, UiState};

/// A launchable app.
#[derive(Clone, Copy, Debug)]
pub struct App {
    /// Package name.
    pub package: &'static str,
    /// Launcher activity (short form).
    pub activity: &'static str,
    /// Icon label.
    pub label: &'static str,
    /// Icon / title bar colour.
    pub color: [u8; 4],
}

/// Apps with a LAUNCHER activity, in home-screen order.
pub const APPS: &[App] = &[
    App {
        package: "com.example.notes",
        activity: ".MainActivity",
        label: "Notes",
        color: [0xf9, 0xc7, 0x4f, 0xff],
    },
    App {
        package: "com.android.settings",
        activity: ".Settings",
        label: "Settings",
        color: [0x1a, 0x73, 0xe8, 0xff],
    },
    App {
        package: "com.android.deskclock",
        activity: ".DeskClock",
        label: "Clock",
        color: [0x34, 0xa8, 0x53, 0xff],
    },
];

/// Apps with only a `LEANBACK_LAUNCHER` activity (TV apps; field bug 17): not on the home
/// screen, not found by `monkey -c android.intent.category.LAUNCHER`.
pub const LEANBACK_APPS: &[App] = &[App {
    package: "com.example.tv",
    activity: ".TvMainActivity",
    label: "TV Guide",
    color: [0x8e, 0x24, 0xaa, 0xff],
}];

/// Package of ADBKeyBoard (`senzhk/ADBKeyBoard`), installed when the state says so.
pub const ADB_KEYBOARD_PACKAGE: &str = "com.android.adbkeyboard";
/// Its input method id.
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";
/// The stock keyboard's input method id.
pub const LATIN_IME: &str =
    "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME";

/// Installed packages without a launcher activity (`pm list packages`).
pub const SYSTEM_PACKAGES: &[&str] = &[
    "android",
    "com.android.systemui",
    "com.android.shell",
    "com.android.phone",
    "com.android.providers.settings",
    "com.google.android.inputmethod.latin",
];

/// Resource-id of the Notes text field.
pub const NOTE_FIELD: &str = "com.example.notes:id/note_text";
/// Hint of the empty Notes field.
pub const NOTE_HINT: &str = "Write a note";

/// Settings' top-level entries (AOSP `top_level_settings.xml` order).
pub const SETTINGS_ITEMS: &[(&str, &str)] = &[
    ("Network & internet", "Mobile, Wi-Fi, hotspot"),
    ("Connected devices", "Bluetooth, pairing"),
    ("Apps", "Recent apps, default apps"),
    ("Notifications", "Notification history, conversations"),
    ("Battery", "(battery level)"),
    ("Storage", "34% used - 84.5 GB free"),
    ("Sound & vibration", "Volume, haptics, Do Not Disturb"),
    ("Display", "Dark theme, font size, brightness"),
    ("Security & privacy", "App security, device lock"),
    ("System", "Languages, gestures, time, backup"),
];

/// The app record of a package with a launcher activity.
pub fn find(package: &str) -> Option<&'static App> {
    APPS.iter().find(|a| a.package == package)
}

/// The app record of a package with a launcher or leanback launcher activity.
pub fn find_any(package: &str) -> Option<&'static App> {
    find(package).or_else(|| LEANBACK_APPS.iter().find(|a| a.package == package))
}

const WHITE: [u8; 4] = [0xff, 0xff, 0xff, 0xff];

fn title_bar(pkg: &str, label: &str, color: [u8; 4], screen: Rect) -> Node {
    let bar = Rect::new(0, 0, screen.x2, screen.y2 / 10);
    let mut title = Node::new(
        "android.widget.TextView",
        pkg,
        Rect::new(bar.x2 / 24, bar.y2 / 3, bar.x2 * 2 / 3, bar.y2),
    )
    .text(label)
    .id(&format!("{pkg}:id/title"));
    title.ink = WHITE;
    Node::new("android.view.ViewGroup", pkg, bar)
        .id(&format!("{pkg}:id/toolbar"))
        .fill(color)
        .with(vec![title])
}

/// The home screen: one icon per app in a 4-column row at 70 % of the height.
pub fn launcher(pkg: &str, screen: Rect) -> Node {
    let (w, h) = (screen.x2, screen.y2);
    let (y1, y2) = (h * 70 / 100, h * 80 / 100);
    let icons = APPS
        .iter()
        .enumerate()
        .map(|(i, app)| {
            let i = i as i32;
            let bounds = Rect::new(i * w / 4, y1, (i + 1) * w / 4, y2);
            let mut icon = Node::new("android.widget.TextView", pkg, bounds)
                .text(app.label)
                .fill(app.color)
                .on_tap(Action::Launch(app.package.into(), app.activity.into()));
            icon.content_desc = app.label.to_string();
            icon.long_clickable = true;
            icon.ink = WHITE;
            icon
        })
        .collect();
    let workspace = Node::new("android.view.ViewGroup", pkg, screen)
        .id(&format!("{pkg}:id/workspace"))
        .with(icons);
    Node::new("android.widget.FrameLayout", pkg, screen)
        .id(&format!("{pkg}:id/launcher"))
        .fill([0x1b, 0x2a, 0x49, 0xff])
        .with(vec![workspace])
}

/// The lock screen.
pub fn keyguard(screen: Rect) -> Node {
    let pkg = "com.android.systemui";
    let clock = Node::new(
        "android.widget.TextView",
        pkg,
        Rect::new(0, screen.y2 / 5, screen.x2, screen.y2 / 3),
    )
    .text("10:30")
    .id("com.android.systemui:id/keyguard_clock");
    Node::new("android.widget.FrameLayout", pkg, screen)
        .id("com.android.systemui:id/notification_panel")
        .fill([0x10, 0x10, 0x10, 0xff])
        .with(vec![clock])
}

/// The screen of a non-launcher app; `ui` carries the Notes text and focus, `battery_level`
/// (percent) shows in Settings.
pub fn screen(pkg: &str, ui: &UiState, battery_level: u32, screen: Rect) -> Node {
    let app = find_any(pkg);
    let label = app.map_or(pkg, |a| a.label);
    let color = app.map_or([0x60, 0x60, 0x60, 0xff], |a| a.color);
    let body = Rect::new(0, screen.y2 / 10, screen.x2, screen.y2);
    let content = match pkg {
        "com.example.notes" => vec![notes_field(ui, body)],
        "com.android.settings" => vec![settings_list(body, battery_level)],
        "com.android.deskclock" => vec![Node::new(
            "android.widget.TextView",
            pkg,
            Rect::new(0, body.y1 + body.y2 / 10, body.x2, body.y1 + body.y2 / 4),
        )
        .text("10:30")
        .id("com.android.deskclock:id/digital_clock")],
        _ => crate::screens::content(pkg, ui, body).unwrap_or_default(),
    };
    let body = Node::new("android.widget.FrameLayout", pkg, body)
        .id("android:id/content")
        .with(content);
    Node::new("android.widget.LinearLayout", pkg, screen)
        .fill(WHITE)
        .with(vec![title_bar(pkg, label, color, screen), body])
}

fn notes_field(ui: &UiState, body: Rect) -> Node {
    let pkg = "com.example.notes";
    let m = body.x2 / 24;
    let bounds = Rect::new(m, body.y1 + m, body.x2 - m, body.y1 + body.y2 / 3);
    let empty = ui.note_text.is_empty();
    let mut field = Node::new("android.widget.EditText", pkg, bounds)
        .text(if empty { NOTE_HINT } else { &ui.note_text })
        .id(NOTE_FIELD)
        .fill([0xee, 0xee, 0xee, 0xff])
        .on_tap(Action::Focus(NOTE_FIELD.into()));
    field.long_clickable = true;
    field.focused = ui.focused.as_deref() == Some(NOTE_FIELD);
    if empty {
        field.ink = [0x90, 0x90, 0x90, 0xff];
    }
    field
}

fn settings_list(body: Rect, battery: u32) -> Node {
    let pkg = "com.android.settings";
    let row_h = (body.y2 - body.y1) / 12;
    let rows = SETTINGS_ITEMS
        .iter()
        .enumerate()
        .map(|(i, (title, summary))| {
            let battery_text = format!("{battery}%");
            let summary = if *title == "Battery" {
                battery_text.as_str()
            } else {
                summary
            };
            let y = body.y1 + i as i32 * row_h;
            let row = Rect::new(0, y, body.x2, y + row_h - 4);
            let t = Node::new(
                "android.widget.TextView",
                pkg,
                Rect::new(body.x2 / 8, y + row_h / 8, body.x2 - 40, y + row_h / 2),
            )
            .text(title)
            .id("android:id/title");
            let s = Node::new(
                "android.widget.TextView",
                pkg,
                Rect::new(body.x2 / 8, y + row_h / 2, body.x2 - 40, y + row_h * 7 / 8),
            )
            .text(summary)
            .id("android:id/summary");
            let mut n = Node::new("android.widget.LinearLayout", pkg, row)
                .fill([0xf3, 0xf6, 0xfc, 0xff])
                .with(vec![t, s]);
            n.clickable = true;
            n.focusable = true;
            n
        })
        .collect();
    let mut list = Node::new("androidx.recyclerview.widget.RecyclerView", pkg, body)
        .id("com.android.settings:id/recycler_view")
        .with(rows);
    list.scrollable = true;
    list.focusable = true;
    list
}
