//! The UI tree of the foreground screen: one model that `uiautomator dump` serialises,
//! `screencap` draws and `input tap` hit-tests, so the three always agree
//! ([`crate::phone::PhoneState::ui_tree`] composes it from [`crate::apps`]' screens).
//! Node attributes are the set real dumps carry (`fixtures/uiautomator/emulator-nexuslauncher-1080x2400.xml`).

/// The foreground task stack and text state of the apps.
#[derive(Clone, Debug)]
pub struct UiState {
    /// Activity stack, bottom first; the bottom is always the launcher.
    pub stack: Vec<(String, String)>,
    /// resource-id of the focused input field, if any (keyboard shown).
    pub focused: Option<String>,
    /// Text of the Notes app's EditText (`com.example.notes:id/note_text`).
    pub note_text: String,
}

/// A rectangle in display pixels, `[x1,y1][x2,y2]` with x2/y2 exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// Left.
    pub x1: i32,
    /// Top.
    pub y1: i32,
    /// Right (exclusive).
    pub x2: i32,
    /// Bottom (exclusive).
    pub y2: i32,
}

impl Rect {
    /// Builds a rectangle from its corners.
    pub fn new(x1: i32, y1: i32, x2: i32, y2: i32) -> Rect {
        Rect { x1, y1, x2, y2 }
    }

    /// Whether the point lies inside.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x1 && x < self.x2 && y >= self.y1 && y < self.y2
    }
}

/// What tapping a node does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Start `(package, activity)`.
    Launch(String, String),
    /// Focus the input field with this resource-id (shows the keyboard).
    Focus(String),
    /// A button of the framework's crash or ANR dialog.
    Dialog(DialogButton),
}

/// The buttons of a framework process dialog (AOSP `AppErrorDialog`, `AppNotRespondingDialog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogButton {
    /// "Close app": the process is killed, the dialog goes.
    Close,
    /// "Wait" (ANR): the dialog goes, the app stays.
    Wait,
    /// "App info" (crash): the dialog goes.
    AppInfo,
}

/// One view node.
#[derive(Clone, Debug)]
pub struct Node {
    /// Java class, e.g. `android.widget.TextView`.
    pub class: &'static str,
    /// `text` attribute (for an empty EditText: its hint, as `getTextForAccessibility` does).
    pub text: String,
    /// `resource-id` (`pkg:id/name`) or empty.
    pub resource_id: String,
    /// Owning package.
    pub package: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `clickable`.
    pub clickable: bool,
    /// `focusable`.
    pub focusable: bool,
    /// `focused`.
    pub focused: bool,
    /// `scrollable`.
    pub scrollable: bool,
    /// `long-clickable`.
    pub long_clickable: bool,
    /// `password`.
    pub password: bool,
    /// `bounds`.
    pub bounds: Rect,
    /// Children in drawing order.
    pub children: Vec<Node>,
    /// Fill colour (RGBA) the renderer paints, if any.
    pub fill: Option<[u8; 4]>,
    /// Text colour for the renderer.
    pub ink: [u8; 4],
    /// Tap behaviour.
    pub action: Action,
}

impl Node {
    /// A plain, non-interactive node.
    pub fn new(class: &'static str, package: &str, bounds: Rect) -> Node {
        Node {
            class,
            text: String::new(),
            resource_id: String::new(),
            package: package.to_string(),
            content_desc: String::new(),
            clickable: false,
            focusable: false,
            focused: false,
            scrollable: false,
            long_clickable: false,
            password: false,
            bounds,
            children: Vec::new(),
            fill: None,
            ink: [0x20, 0x20, 0x20, 0xff],
            action: Action::None,
        }
    }

    /// Sets the text.
    pub fn text(mut self, text: &str) -> Node {
        self.text = text.to_string();
        self
    }

    /// Sets the resource-id.
    pub fn id(mut self, id: &str) -> Node {
        self.resource_id = id.to_string();
        self
    }

    /// Sets the fill colour.
    pub fn fill(mut self, rgba: [u8; 4]) -> Node {
        self.fill = Some(rgba);
        self
    }

    /// Makes it clickable with an action.
    pub fn on_tap(mut self, action: Action) -> Node {
        self.clickable = true;
        self.focusable = true;
        self.action = action;
        self
    }

    /// Adds children.
    pub fn with(mut self, children: Vec<Node>) -> Node {
        self.children.extend(children);
        self
    }

    /// The deepest node under (x, y) that has an action.
    pub fn hit(&self, x: i32, y: i32) -> Option<&Node> {
        if !self.bounds.contains(x, y) {
            return None;
        }
        let deeper = self.children.iter().rev().find_map(|c| c.hit(x, y));
        deeper.or(if self.action == Action::None {
            None
        } else {
            Some(self)
        })
    }

    /// Depth-first search for a node by predicate.
    pub fn find(&self, pred: &dyn Fn(&Node) -> bool) -> Option<&Node> {
        if pred(self) {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(pred))
    }
}
