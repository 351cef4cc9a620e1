//! Screens of apps built with other UI toolkits than Views, as `uiautomator` dumps them (no
//! launcher icon; bring them up with `POST /v1/state {"foreground": "PKG/.Activity"}`):
//!
//! - `com.example.people/.PersonDetailsActivity`: Jetpack Compose with `testTagsAsResourceId`,
//!   whose test tags are dumped as bare resource ids (`resource-id="personDetailsSpeedDial_Main"`,
//!   no `pkg:id/`; kaeawc/auto-mobile#3852, field bug 42), beside View ids of the app and of the
//!   platform (`android:id/title`), so a bare `title` names two ids.
//! - `com.example.web/.BlankActivity`: a `android.webkit.WebView` over the screen below the
//!   title bar with no descendants (a page that exposes no accessibility nodes;
//!   kelai141/dsh-mobile-apk#128, field bug 43); `.SparseActivity`: the same view with a full
//!   size container and two small nodes; `.ArticleActivity`: a page that exposes its text.

use crate::ui::{Node, Rect, UiState};

/// Package of the Compose app.
pub const PEOPLE: &str = "com.example.people";
/// Package of the web view app.
pub const WEB: &str = "com.example.web";

/// The content of `pkg`'s screen below its title bar, if it is one of these apps.
pub fn content(pkg: &str, ui: &UiState, body: Rect) -> Option<Vec<Node>> {
    let activity = ui.stack.last().map(|(_, a)| a.as_str()).unwrap_or("");
    match pkg {
        PEOPLE => Some(people(body)),
        WEB => Some(vec![web(activity, body)]),
        _ => None,
    }
}

fn tagged(class: &'static str, pkg: &str, bounds: Rect, tag: &str) -> Node {
    Node::new(class, pkg, bounds).id(tag)
}

fn people(body: Rect) -> Vec<Node> {
    let (w, y) = (body.x2, body.y1);
    let name = tagged(
        "android.widget.TextView",
        PEOPLE,
        Rect::new(w / 12, y + 40, w * 2 / 3, y + 140),
        "personName",
    )
    .text("Ada Lovelace");
    let mut call = tagged(
        "android.view.View",
        PEOPLE,
        Rect::new(w / 12, y + 200, w / 2, y + 320),
        "personDetailsCall",
    )
    .text("Call");
    call.clickable = true;
    call.focusable = true;
    // An AndroidView interop row keeps its View ids, the platform's among them.
    let ringtone = Node::new(
        "android.widget.TextView",
        PEOPLE,
        Rect::new(w / 12, y + 400, w - 40, y + 480),
    )
    .text("Ringtone")
    .id("android:id/title");
    let mut fab = tagged(
        "android.view.View",
        PEOPLE,
        Rect::new(w - 260, body.y2 - 300, w - 60, body.y2 - 100),
        "personDetailsSpeedDial_Main",
    );
    fab.content_desc = "Actions".into();
    fab.clickable = true;
    fab.focusable = true;
    let compose = Node::new("androidx.compose.ui.platform.ComposeView", PEOPLE, body)
        .with(vec![name, call, ringtone, fab]);
    vec![compose]
}

fn web(activity: &str, body: Rect) -> Node {
    let mut view = Node::new("android.webkit.WebView", WEB, body);
    view.focusable = true;
    view.scrollable = activity == ".ArticleActivity";
    match activity {
        ".SparseActivity" => {
            let (x, y) = (body.x2 / 12, body.y1 + 60);
            let spinner = Node::new(
                "android.widget.TextView",
                WEB,
                Rect::new(x, y, x + 300, y + 60),
            )
            .text("Loading…");
            let mut retry = Node::new(
                "android.widget.Button",
                WEB,
                Rect::new(x, y + 100, x + 200, y + 180),
            )
            .text("Retry");
            retry.clickable = true;
            let page = Node::new("android.view.View", WEB, body).with(vec![spinner, retry]);
            view.with(vec![page])
        }
        ".ArticleActivity" => {
            let row_h = (body.y2 - body.y1) / 8;
            let rows = (0..8)
                .map(|i| {
                    let top = body.y1 + i * row_h;
                    Node::new(
                        "android.widget.TextView",
                        WEB,
                        Rect::new(0, top, body.x2, top + row_h - 4),
                    )
                    .text(&format!("Paragraph {}", i + 1))
                })
                .collect();
            view.with(vec![Node::new("android.view.View", WEB, body).with(rows)])
        }
        _ => view,
    }
}
