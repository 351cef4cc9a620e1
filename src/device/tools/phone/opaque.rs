//! Large regions of the screen the accessibility tree does not see into (field bug 43,
//! kelai141/dsh-mobile-apk#128): a `android.webkit.WebView` whose page exposes no nodes (or a
//! few that cover little of it) over most of the screen, and the same for views that draw
//! their own pixels — `SurfaceView` / `TextureView` (video, maps, games), Flutter without
//! semantics, Unity. The dump shows them as one childless node, so a tree of two elements
//! looks complete; [`opaque_regions`] says where the tree is blind, so the agent uses a
//! screenshot and coordinates there.

use super::ui::meaningful;
use crate::device::parse::uiautomator::{Bounds, UiDump, UiNode};

/// Least share of the screen a region must cover to be reported.
pub const MIN_SCREEN_SHARE: f64 = 0.25;
/// At most this many described descendants still count as "a few".
pub const FEW_DESCENDANTS: usize = 3;
/// Below this share of the region covered by its described descendants, a few of them do not
/// describe it.
pub const MIN_COVERED_SHARE: f64 = 0.25;

/// What kind of view the region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpaqueKind {
    /// A web view (`…WebView`): its page is drawn by a browser engine.
    WebView,
    /// A view drawing its own pixels (`SurfaceView`, `TextureView`, Flutter, Unity).
    Surface,
}

impl OpaqueKind {
    /// The wire name (`web_view`, `surface`).
    pub fn as_str(self) -> &'static str {
        match self {
            OpaqueKind::WebView => "web_view",
            OpaqueKind::Surface => "surface",
        }
    }

    /// The kind of a node's class, if it is one of them.
    fn of(class: &str) -> Option<OpaqueKind> {
        let short = class.rsplit('.').next().unwrap_or(class);
        if short.ends_with("WebView") {
            Some(OpaqueKind::WebView)
        } else if short.ends_with("SurfaceView")
            || short.ends_with("TextureView")
            || short.starts_with("Flutter")
            || short == "UnityPlayer"
        {
            Some(OpaqueKind::Surface)
        } else {
            None
        }
    }
}

/// A region the tree does not describe.
#[derive(Debug, Clone, PartialEq)]
pub struct OpaqueRegion {
    /// The node's class.
    pub class: String,
    /// What it is.
    pub kind: OpaqueKind,
    /// Where, display px.
    pub bounds: Bounds,
    /// Its described (meaningful) descendants.
    pub described_descendants: usize,
    /// What the agent should do there.
    pub hint: String,
}

fn area(b: &Bounds) -> f64 {
    f64::from(b.width()) * f64::from(b.height())
}

fn clipped(b: &Bounds, to: &Bounds) -> Bounds {
    Bounds {
        left: b.left.max(to.left),
        top: b.top.max(to.top),
        right: b.right.min(to.right),
        bottom: b.bottom.min(to.bottom),
    }
}

/// The regions of `dump` the tree does not describe: a web view or surface covering at least
/// [`MIN_SCREEN_SHARE`] of the screen with no described descendant, or at most
/// [`FEW_DESCENDANTS`] covering under [`MIN_COVERED_SHARE`] of it. Document order.
pub fn opaque_regions(dump: &UiDump) -> Vec<OpaqueRegion> {
    let screen = dump
        .nodes
        .iter()
        .filter(|n| n.depth == 0)
        .map(|n| area(&n.bounds))
        .fold(0.0, f64::max);
    if screen <= 0.0 {
        return Vec::new();
    }
    dump.nodes
        .iter()
        .filter_map(|n| Some((n, OpaqueKind::of(&n.class)?)))
        .filter(|(n, _)| area(&n.bounds) / screen >= MIN_SCREEN_SHARE)
        .filter_map(|(n, kind)| region(dump, n, kind))
        .collect()
}

fn region(dump: &UiDump, node: &UiNode, kind: OpaqueKind) -> Option<OpaqueRegion> {
    let prefix = format!("{}/", node.index_path);
    let described: Vec<&UiNode> = dump
        .nodes
        .iter()
        .filter(|d| d.index_path.starts_with(&prefix) && meaningful(d, false))
        .collect();
    let covered: f64 = described
        .iter()
        .map(|d| area(&clipped(&d.bounds, &node.bounds)))
        .sum::<f64>()
        / area(&node.bounds).max(1.0);
    let blind =
        described.is_empty() || (described.len() <= FEW_DESCENDANTS && covered < MIN_COVERED_SHARE);
    if !blind {
        return None;
    }
    let b = node.bounds;
    let what = match (kind, described.len()) {
        (OpaqueKind::WebView, 0) => {
            "this web view's page exposes nothing to the accessibility tree"
        }
        (OpaqueKind::WebView, _) => {
            "this web view's page exposes only a few nodes covering little of it"
        }
        (OpaqueKind::Surface, 0) => {
            "this view draws its own pixels and exposes nothing to the accessibility tree"
        }
        (OpaqueKind::Surface, _) => "this view draws its own pixels and exposes only a few nodes",
    };
    Some(OpaqueRegion {
        class: node.class.clone(),
        kind,
        bounds: b,
        described_descendants: described.len(),
        hint: format!(
            "{what}: the tree is blind in [{},{}][{},{}] — take android_screenshot and act by coordinates there (x in {}..{}, y in {}..{})",
            b.left, b.top, b.right, b.bottom, b.left, b.right, b.top, b.bottom
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::uiautomator::parse_uiautomator_dump;

    fn node(class: &str, bounds: &str, extra: &str, children: &str) -> String {
        format!("<node class=\"{class}\" bounds=\"{bounds}\" {extra}>{children}</node>")
    }

    /// The opaque regions of a 1080x2400 screen holding `children`.
    fn regions_of(children: &str) -> Vec<OpaqueRegion> {
        let root = node(
            "android.widget.FrameLayout",
            "[0,0][1080,2400]",
            "",
            children,
        );
        let xml = format!("<hierarchy rotation=\"0\">{root}</hierarchy>");
        opaque_regions(&parse_uiautomator_dump(&xml).unwrap())
    }

    #[test]
    fn a_childless_web_view_over_most_of_the_screen_is_opaque() {
        let web = node(
            "android.webkit.WebView",
            "[0,240][1080,2400]",
            "focusable=\"true\"",
            "",
        );
        let bar = node(
            "android.widget.TextView",
            "[0,0][1080,240]",
            "text=\"Shop\"",
            "",
        );
        let regions = regions_of(&(bar + &web));
        assert_eq!(regions.len(), 1, "{regions:?}");
        assert_eq!(regions[0].kind, OpaqueKind::WebView);
        assert!(
            regions[0].hint.contains("android_screenshot"),
            "{}",
            regions[0].hint
        );
        assert!(regions[0].hint.contains("[0,240][1080,2400]"));
    }

    #[test]
    fn a_described_web_view_or_a_small_one_is_not() {
        let rows: String = (0..6)
            .map(|i| {
                let top = 300 + i * 300;
                node(
                    "android.view.View",
                    &format!("[0,{top}][1080,{}]", top + 300),
                    "text=\"row\"",
                    "",
                )
            })
            .collect();
        let described = node("android.webkit.WebView", "[0,240][1080,2400]", "", &rows);
        let small = node("android.webkit.WebView", "[0,0][300,300]", "", "");
        assert!(regions_of(&(described + &small)).is_empty());
    }

    #[test]
    fn a_few_small_descendants_leave_a_surface_opaque() {
        let few = node(
            "android.view.View",
            "[40,300][200,360]",
            "text=\"Close\"",
            "",
        );
        let surface = node("android.view.SurfaceView", "[0,0][1080,1920]", "", &few);
        let regions = regions_of(&surface);
        assert_eq!(regions.len(), 1);
        assert_eq!(
            (regions[0].kind, regions[0].described_descendants),
            (OpaqueKind::Surface, 1)
        );
    }
}
