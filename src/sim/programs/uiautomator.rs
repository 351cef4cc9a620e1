//! `uiautomator dump [--compressed] [FILE]` (AOSP `cmds/uiautomator/.../DumpCommand.java`,
//! `AccessibilityNodeInfoDumper.java`): writes the XML (default `/sdcard/window_dump.xml`) and
//! prints `UI hierchary dumped to: FILE` (sic). `FILE` = `/dev/tty` prints the XML first — or,
//! with state `ui_dump_tty: "status_only"`, only the status line (field bug 39: no terminal).
//! XML shape: `fixtures/uiautomator/emulator-gmail-alert-dialog.xml` and
//! `bluestacks-rotation1-portrait-bounds-1080x1920.xml` (the 17 attributes in this order, a leading
//! `NAF="true"` on clickable nodes nothing describes; pinned by `tests/sim_fixture_conformance.rs`).

use super::Output;
use crate::phone::{now_secs, Phone, TtyDump};
use crate::ui::Node;
use crate::vfs::normalize;

/// Default dump path.
pub const DEFAULT_FILE: &str = "/sdcard/window_dump.xml";

/// Runs `uiautomator`.
pub fn run(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let mut args = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--compressed");
    if args.next() != Some("dump") {
        return Output::err(1, "Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp: displays help message\n\nruntest: executes UI automation tests\n\ndump: creates an XML dump of current UI hierarchy\n\nevents: prints out accessibility events until terminated\n");
    }
    let file = args.next().unwrap_or(DEFAULT_FILE).to_string();
    let xml = phone.with(|s| dump_xml(&s.ui_tree(), s.rotation));
    let done = format!("UI hierchary dumped to: {file}\n");
    if file == "/dev/tty" {
        return match phone.with(|s| s.ui_dump_tty) {
            TtyDump::Xml => Output::ok(format!("{xml}{done}")),
            // The write's IOException is only logged (`dumpWindowToFile`); the line is printed.
            TtyDump::StatusOnly => Output::ok(done),
        };
    }
    let path = normalize(cwd, &file);
    match phone.with(|s| s.vfs.write(&path, xml.as_bytes(), false, now_secs())) {
        Ok(()) => Output::ok(done),
        Err(e) => Output::err(
            1,
            format!("ERROR: could not write {file}: {}\n", e.message()),
        ),
    }
}

/// The whole dump: XML declaration, `<hierarchy rotation=…>`, nodes, no trailing newline.
pub fn dump_xml(root: &Node, rotation: u32) -> String {
    let mut out = format!("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"{rotation}\">");
    write_node(&mut out, root, 0);
    out.push_str("</hierarchy>");
    out
}

/// Classes the dumper never flags NAF (`NAF_EXCLUDED_CLASSES`).
const NAF_EXCLUDED: &[&str] = &[
    "android.widget.GridView",
    "android.widget.GridLayout",
    "android.widget.ListView",
    "android.widget.TableLayout",
];

fn described(n: &Node) -> bool {
    !n.text.is_empty() || !n.content_desc.is_empty()
}

/// "Not Accessibility Friendly": clickable and enabled, no text nor content-desc on it or any
/// descendant (`AccessibilityNodeInfoDumper.nafCheck`/`childNafCheck`).
fn naf(n: &Node) -> bool {
    fn any_described(n: &Node) -> bool {
        n.children.iter().any(|c| described(c) || any_described(c))
    }
    n.clickable && !described(n) && !any_described(n) && !NAF_EXCLUDED.contains(&n.class)
}

fn write_node(out: &mut String, n: &Node, index: usize) {
    let b = n.bounds;
    out.push_str(if naf(n) {
        "<node NAF=\"true\" "
    } else {
        "<node "
    });
    out.push_str(&format!(
        "index=\"{index}\" text=\"{}\" resource-id=\"{}\" class=\"{}\" package=\"{}\" content-desc=\"{}\" checkable=\"false\" checked=\"false\" clickable=\"{}\" enabled=\"true\" focusable=\"{}\" focused=\"{}\" scrollable=\"{}\" long-clickable=\"{}\" password=\"{}\" selected=\"false\" bounds=\"[{},{}][{},{}]\"",
        escape(&n.text), escape(&n.resource_id), n.class, escape(&n.package), escape(&n.content_desc),
        n.clickable, n.focusable, n.focused, n.scrollable, n.long_clickable, n.password,
        b.x1, b.y1, b.x2, b.y2
    ));
    if n.children.is_empty() {
        out.push_str(" />");
        return;
    }
    out.push('>');
    for (i, c) in n.children.iter().enumerate() {
        write_node(out, c, i);
    }
    out.push_str("</node>");
}

/// KXmlSerializer attribute escaping: `& < > "` as entities, control characters as `&#N;`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if (c as u32) < 0x20 => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
    out
}
