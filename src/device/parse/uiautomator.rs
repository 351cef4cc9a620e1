//! `uiautomator dump /dev/tty`: the accessibility tree as XML, flattened in document order.
//!
//! Output shape (AOSP `frameworks/testing/uiautomator` `DumpCommand` and
//! `AccessibilityNodeInfoDumper`): `<?xml …?><hierarchy rotation="R">` with nested `<node …/>`
//! elements carrying `index text resource-id class package content-desc checkable checked
//! clickable enabled focusable focused scrollable long-clickable password selected bounds` and,
//! in newer/androidx dumpers, `visible-to-user drawing-order hint display-id`; followed on stdout by
//! `UI hierchary dumped to: /dev/tty` (sic). `bounds` is `[left,top][right,bottom]` in screen
//! pixels of the current rotation. Text uses entities (`&#10;`, `&#128308;`, and on old builds
//! UTF-16 surrogate pairs such as `&#55357;&#56832;`). Failures print instead of XML:
//! `ERROR: could not get idle state.`, `ERROR: null root node returned by UiTestAutomationBridge.`,
//! or a `java.lang.IllegalStateException: UiAutomationService … already registered!` trace;
//! the status line alone means the tree went nowhere (`/dev/tty` without a terminal, field bug 39).
//! Captures: `tests/fixtures/uiautomator/*.xml` (compact, pretty-printed, minidom re-serialised
//! with `NAF`, multi-window with `display-id`, API 17 without `resource-id`) and an Appium page
//! source (`other/appium-pagesource-…xml`, element names are class names) which also parses.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use thiserror::Error;

use super::text::parse_u32;

/// A rectangle in screen pixels; `right`/`bottom` are exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bounds {
    /// Left edge (px).
    pub left: i32,
    /// Top edge (px).
    pub top: i32,
    /// Right edge, exclusive (px).
    pub right: i32,
    /// Bottom edge, exclusive (px).
    pub bottom: i32,
}

impl Bounds {
    /// Parses `[left,top][right,bottom]` (negative values allowed); `None` when malformed.
    pub fn parse(s: &str) -> Option<Bounds> {
        let nums: Vec<i32> = s
            .split(['[', ']', ','])
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().parse().ok())
            .collect::<Option<_>>()?;
        match nums[..] {
            [left, top, right, bottom] => Some(Bounds {
                left,
                top,
                right,
                bottom,
            }),
            _ => None,
        }
    }
    /// Width in px (0 when inverted).
    pub fn width(&self) -> i32 {
        self.right.saturating_sub(self.left).max(0)
    }
    /// Height in px (0 when inverted).
    pub fn height(&self) -> i32 {
        self.bottom.saturating_sub(self.top).max(0)
    }
    /// Centre point `(x, y)` in px (rounded down).
    pub fn center(&self) -> (i32, i32) {
        (
            self.left.saturating_add(self.width() / 2),
            self.top.saturating_add(self.height() / 2),
        )
    }
    /// Whether `(x, y)` lies inside (left/top inclusive, right/bottom exclusive).
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }
    /// No area (zero or negative width or height).
    pub fn is_empty(&self) -> bool {
        self.width() == 0 || self.height() == 0
    }
}

/// One element of the tree. Missing attributes read as `""` / `false` / `None`; `enabled` too.
#[derive(Debug, Clone, PartialEq)]
pub struct UiNode {
    /// Position path from the root, 0-based sibling positions in document order (`"0/2/1"`);
    /// unique even when several window roots share `index="0"`.
    pub index_path: String,
    /// Nesting depth, 0 for a window root.
    pub depth: u32,
    /// `class` (or the element name when it is not `node`, as in Appium page sources).
    pub class: String,
    /// `text`, entities decoded.
    pub text: String,
    /// `resource-id` (absent before API 18).
    pub resource_id: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `package`.
    pub package: String,
    /// `bounds`; all zeros when missing or malformed.
    pub bounds: Bounds,
    /// `clickable`.
    pub clickable: bool,
    /// `long-clickable`.
    pub long_clickable: bool,
    /// `focusable`.
    pub focusable: bool,
    /// `focused`.
    pub focused: bool,
    /// `scrollable`.
    pub scrollable: bool,
    /// `enabled`.
    pub enabled: bool,
    /// `checkable`.
    pub checkable: bool,
    /// `checked`.
    pub checked: bool,
    /// `selected`.
    pub selected: bool,
    /// `password`.
    pub password: bool,
    /// `hint` (androidx dumper, API 26+).
    pub hint: String,
    /// `display-id` (multi-display dumpers).
    pub display_id: Option<u32>,
}

/// A parsed dump.
#[derive(Debug, Clone, PartialEq)]
pub struct UiDump {
    /// `rotation` of `<hierarchy>`: 0–3 quarter turns (0 when absent).
    pub rotation: u32,
    /// Every node, flattened in document order (parents before children).
    pub nodes: Vec<UiNode>,
}

/// Why a dump produced no tree. Never reported as an empty tree (field bugs 9, 10).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UiDumpError {
    /// `ERROR: could not get idle state.` — the UI never settled (animations); retry later.
    #[error("uiautomator could not get idle state")]
    NotIdle,
    /// `ERROR: null root node returned by UiTestAutomationBridge.`, or a `<hierarchy>` with no
    /// node — no active window right now; retry.
    #[error("uiautomator returned a null root node")]
    NullRoot,
    /// `UiAutomationService … already registered!`, or (Android 10+) `java.lang.RuntimeException:
    /// Error while connecting UiAutomation@…` — another UiAutomation client holds the service.
    #[error("another UiAutomation client is registered (uiautomator busy)")]
    AutomationBusy,
    /// Only the status line `UI hierchary dumped to: PATH` (sic; or spelled right), perhaps with
    /// the failed open of `/dev/tty`, and no XML: the dump claims success but the tree went
    /// nowhere (AOSP `AccessibilityNodeInfoDumper.dumpWindowToFile` only logs the
    /// `IOException`; field bug 39: `/dev/tty` without a controlling terminal).
    #[error("uiautomator printed only `UI hierchary dumped to: {path}` and no XML")]
    StatusOnly {
        /// The path the status line names (`/dev/tty`), or `/dev/tty` when only its failed
        /// open was printed.
        path: String,
    },
    /// No XML and no known error; `output` holds the (trimmed, ≤ 2000 bytes) text printed.
    #[error("uiautomator printed no XML: {output}")]
    NoXml {
        /// What the command printed instead.
        output: String,
    },
    /// The XML is malformed or truncated.
    #[error("malformed uiautomator XML: {0}")]
    Xml(String),
    /// The dumper's XML writer refused a character of the screen's text: KXmlSerializer's
    /// `java.lang.IllegalArgumentException: Illegal character (d83d)` (Android 4–6,
    /// `org.kxml2.io`), `Illegal character (U+0)` (`com.android.org.kxml2.io`, Android 7+) or
    /// `Bad surrogate pair (U+d83d U+41)`, thrown through `writeEscaped` (openatx/uiautomator2#135,
    /// #506; xiaocong/uiautomator#54, #129, #177; mobile-dev-inc/Maestro#288; field bug 66). AOSP's
    /// `AccessibilityNodeInfoDumper.stripInvalidXMLChars` replaces U+0001–U+0008 and a few other
    /// controls with `.`, but neither NUL nor a UTF-16 surrogate half, and the writer refuses
    /// both (Android before 5 refuses every surrogate, so any emoji). The same text fails the
    /// same way: not worth a retry.
    #[error("uiautomator could not write a character of the screen's text to XML: {line}")]
    UnwritableText {
        /// The refused UTF-16 unit as `U+XXXX`, when the message names it.
        character: Option<u32>,
        /// The exception's head line.
        line: String,
    },
    /// The dumper crashed walking the tree: another exception thrown through
    /// `AccessibilityNodeInfoDumper` (the NPE of `childNafCheck` on a child that went away while
    /// it was read, field bug 66's variant). The tree changed under it: worth a retry.
    #[error("uiautomator's dumper crashed while it read the tree: {line}")]
    DumperCrashed {
        /// The exception's head line.
        line: String,
    },
}

/// Parses what `uiautomator dump /dev/tty` printed (see the module docs).
pub fn parse_uiautomator_dump(output: &str) -> Result<UiDump, UiDumpError> {
    let Some(start) = output.find("<hierarchy") else {
        return Err(classify_failure(output));
    };
    let body = &output[start..];
    let end = match body.find("</hierarchy>") {
        Some(i) => i + "</hierarchy>".len(),
        None if body.split('>').next().is_some_and(|tag| tag.ends_with('/')) => {
            return Err(UiDumpError::NullRoot)
        }
        None => return Err(UiDumpError::Xml("truncated: no </hierarchy>".into())),
    };
    let dump = parse_xml(&body[..end])?;
    if dump.nodes.is_empty() {
        return Err(UiDumpError::NullRoot);
    }
    Ok(dump)
}

fn classify_failure(output: &str) -> UiDumpError {
    if output.contains("could not get idle state") {
        UiDumpError::NotIdle
    } else if output.contains("null root node") {
        UiDumpError::NullRoot
    } else if output.contains("already registered")
        || output.contains("Error while connecting UiAutomation")
    {
        UiDumpError::AutomationBusy
    } else if let Some(path) = status_only(output) {
        UiDumpError::StatusOnly { path }
    } else if let Some(e) = super::java_trace::first(output).and_then(|t| dumper_exception(&t)) {
        e
    } else {
        let trimmed = output.trim();
        let mut cut = trimmed.len().min(2000);
        while !trimmed.is_char_boundary(cut) {
            cut -= 1;
        }
        UiDumpError::NoXml {
            output: trimmed[..cut].to_string(),
        }
    }
}

/// The failure a Java exception of the dumper means: another client holding UiAutomation
/// ([`UiDumpError::AutomationBusy`]), the XML writer refusing a character
/// ([`UiDumpError::UnwritableText`]) or another crash in the dumper
/// ([`UiDumpError::DumperCrashed`]); `None` for a trace elsewhere.
pub fn dumper_exception(t: &super::java_trace::JavaTrace) -> Option<UiDumpError> {
    // Another client holding UiAutomation, as the crash buffer holds it (field bug 23's kind).
    if t.message.contains("already registered")
        || t.message.contains("Error while connecting UiAutomation")
    {
        return Some(UiDumpError::AutomationBusy);
    }
    let writer = t.through("KXmlSerializer") || t.through("FastXmlSerializer");
    if writer && t.exception.ends_with("IllegalArgumentException") {
        return Some(UiDumpError::UnwritableText {
            character: refused_unit(&t.message),
            line: t.head.clone(),
        });
    }
    (writer || t.through("AccessibilityNodeInfoDumper") || t.through("DumpCommand")).then(|| {
        UiDumpError::DumperCrashed {
            line: t.head.clone(),
        }
    })
}

/// The UTF-16 unit a writer's message names: `Illegal character (d83d)`, `(U+D83D)`, `(U+0)`,
/// `Bad surrogate pair (U+d83d U+41)` (the first of the pair).
fn refused_unit(message: &str) -> Option<u32> {
    let inside = message.split_once('(')?.1.split(')').next()?;
    let first = inside.split_whitespace().next()?;
    let hex = first
        .strip_prefix("U+")
        .or_else(|| first.strip_prefix("u+"))
        .unwrap_or(first);
    u32::from_str_radix(hex, 16).ok().filter(|u| *u <= 0xFFFF)
}

/// What a refused UTF-16 unit is, in words the agent can act on.
pub fn describe_refused_unit(unit: u32) -> &'static str {
    match unit {
        0xD800..=0xDBFF => "the first half (UTF-16 high surrogate) of an emoji or another character beyond U+FFFF: a text on screen cut in the middle of such a character, or (Android before 5) any emoji",
        0xDC00..=0xDFFF => "the second half (UTF-16 low surrogate) of an emoji or another character beyond U+FFFF, without its first half",
        0 => "a NUL character inside a text on screen",
        0xFFFE | 0xFFFF => "a Unicode noncharacter in a text on screen",
        _ => "a control character inside a text on screen",
    }
}

/// The path of a dump's status line when that line (and the failed open of the tty, with its
/// stack frames) is all it printed.
fn status_only(output: &str) -> Option<String> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let status = |l: &str| {
        let lower = l.to_ascii_lowercase();
        lower.starts_with("ui hier") && lower.contains("dumped to:")
    };
    let tty_failed = |l: &str| {
        l.contains("/dev/tty")
            && [
                "ENXIO",
                "No such device",
                "FileNotFoundException",
                "open failed",
            ]
            .iter()
            .any(|m| l.contains(m))
    };
    let frame = |l: &str| l.starts_with("at ") || l.starts_with("... ");
    if lines.is_empty()
        || !lines.iter().any(|l| status(l) || tty_failed(l))
        || !lines.iter().all(|l| status(l) || tty_failed(l) || frame(l))
    {
        return None;
    }
    let path = lines
        .iter()
        .find(|l| status(l))
        .and_then(|l| l.split_once("dumped to:"))
        .map_or("/dev/tty", |(_, p)| p.trim());
    Some(path.chars().take(200).collect())
}

fn parse_xml(xml: &str) -> Result<UiDump, UiDumpError> {
    let mut reader = Reader::from_str(xml);
    let mut dump = UiDump {
        rotation: 0,
        nodes: Vec::new(),
    };
    // Children seen so far per open element (hierarchy first), and the open nodes' positions.
    let mut child_counts: Vec<usize> = Vec::new();
    let mut path: Vec<usize> = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| UiDumpError::Xml(format!("{e} at byte {}", reader.error_position())))?;
        let (element, is_start) = match event {
            Event::Start(e) => (e, true),
            Event::Empty(e) => (e, false),
            Event::End(_) => {
                child_counts.pop();
                path.pop();
                if child_counts.is_empty() {
                    break;
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let attrs = attributes(&element)?;
        let Some(count) = child_counts.last_mut() else {
            // The <hierarchy> element itself.
            dump.rotation = find_attr(&attrs, "rotation")
                .and_then(parse_u32)
                .unwrap_or(0);
            if is_start {
                child_counts.push(0);
            }
            continue;
        };
        let position = *count;
        *count += 1;
        let mut index_path: String = path.iter().map(|p| format!("{p}/")).collect();
        index_path.push_str(&position.to_string());
        let name = element.name().0;
        dump.nodes
            .push(build_node(&attrs, name, index_path, path.len() as u32));
        if is_start {
            child_counts.push(0);
            path.push(position);
        }
    }
    Ok(dump)
}

type Attrs = Vec<(String, String)>;

fn attributes(element: &BytesStart<'_>) -> Result<Attrs, UiDumpError> {
    element
        .attributes()
        .map(|a| {
            let a = a.map_err(|e| UiDumpError::Xml(e.to_string()))?;
            Ok((a.key.0.to_string(), unescape(&a.value)))
        })
        .collect()
}

fn find_attr<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn build_node(attrs: &Attrs, element: &str, index_path: String, depth: u32) -> UiNode {
    let s = |k: &str| find_attr(attrs, k).unwrap_or_default().to_string();
    let b = |k: &str| find_attr(attrs, k) == Some("true");
    let class = match find_attr(attrs, "class") {
        Some(c) => c.to_string(),
        None if element != "node" => element.to_string(),
        None => String::new(),
    };
    UiNode {
        index_path,
        depth,
        class,
        text: s("text"),
        resource_id: s("resource-id"),
        content_desc: s("content-desc"),
        package: s("package"),
        bounds: find_attr(attrs, "bounds")
            .and_then(Bounds::parse)
            .unwrap_or_default(),
        clickable: b("clickable"),
        long_clickable: b("long-clickable"),
        focusable: b("focusable"),
        focused: b("focused"),
        scrollable: b("scrollable"),
        enabled: b("enabled"),
        checkable: b("checkable"),
        checked: b("checked"),
        selected: b("selected"),
        password: b("password"),
        hint: s("hint"),
        display_id: find_attr(attrs, "display-id").and_then(parse_u32),
    }
}

/// Decodes the five XML entities and numeric references, pairing UTF-16 surrogate references;
/// invalid references become U+FFFD, unknown named entities stay as written.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut high: Option<u32> = None;
    let flush = |out: &mut String, high: &mut Option<u32>| {
        if high.take().is_some() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    };
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        if amp > 0 {
            flush(&mut out, &mut high);
            out.push_str(&rest[..amp]);
        }
        let after = &rest[amp + 1..];
        let Some(semi) = after.find(';').filter(|s| *s <= 12) else {
            flush(&mut out, &mut high);
            out.push('&');
            rest = after;
            continue;
        };
        let name = &after[..semi];
        rest = &after[semi + 1..];
        let code = match name {
            "lt" => Some('<' as u32),
            "gt" => Some('>' as u32),
            "amp" => Some('&' as u32),
            "quot" => Some('"' as u32),
            "apos" => Some('\'' as u32),
            _ => match name.strip_prefix('#') {
                Some(n) => match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => n.parse().ok(),
                }
                .or(Some(0xFFFD)),
                None => None,
            },
        };
        match code {
            None => {
                flush(&mut out, &mut high);
                out.push('&');
                out.push_str(name);
                out.push(';');
            }
            Some(c @ 0xD800..=0xDBFF) => {
                flush(&mut out, &mut high);
                high = Some(c);
            }
            Some(c @ 0xDC00..=0xDFFF) => {
                let ch = high
                    .take()
                    .and_then(|h| char::from_u32(0x10000 + ((h - 0xD800) << 10) + (c - 0xDC00)));
                out.push(ch.unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(c) => {
                flush(&mut out, &mut high);
                out.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }
    flush(&mut out, &mut high);
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "uiautomator_tests.rs"]
mod tests;
