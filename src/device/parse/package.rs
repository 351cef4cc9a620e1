//! `pm list packages [-f] [--show-versioncode]` and `cmd package resolve-activity --brief`,
//! plus the component-name helper the window/activity parsers share.
//!
//! `pm list packages` prints one `package:` line per package (AOSP
//! `PackageManagerShellCommand.runListPackages`): `package:<name>`, with `-f`
//! `package:<apk path>=<name>` (the path itself may contain `=`, e.g. `/data/app/~~Ab==/…`), with
//! `--show-versioncode` a trailing ` versionCode:<n>`, with `-U` ` uid:<n>`, with `-i`
//! ` installer=<pkg>`. Capture: `packages/appium-adb-pm-list-packages-show-versioncode.txt`.
//!
//! `resolve-activity --brief` (AOSP `runResolveActivity`) prints the match's
//! `priority=… preferredOrder=…` line and then the component `pkg/.Activity` as its last line, or
//! `No activity found` when nothing matches.

/// One line of `pm list packages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageLine {
    /// Package name (`com.android.chrome`).
    pub package: String,
    /// APK path (with `-f`).
    pub apk_path: Option<String>,
    /// `versionCode:` (with `--show-versioncode`).
    pub version_code: Option<u64>,
}

/// Parses `pm list packages` output; lines not starting with `package:` are skipped.
pub fn parse_pm_list_packages(text: &str) -> Vec<PackageLine> {
    text.lines().filter_map(parse_package_line).collect()
}

fn parse_package_line(line: &str) -> Option<PackageLine> {
    let rest = line.trim().strip_prefix("package:")?;
    let mut tokens = rest.split_whitespace();
    let first = tokens.next()?;
    let (apk_path, package) = match first.rsplit_once('=') {
        Some((path, name)) if path.starts_with('/') => (Some(path.to_string()), name),
        _ => (None, first),
    };
    if package.is_empty() {
        return None;
    }
    let version_code = tokens
        .find_map(|t| t.strip_prefix("versionCode:"))
        .and_then(|v| v.parse().ok());
    Some(PackageLine {
        package: package.to_string(),
        apk_path,
        version_code,
    })
}

/// Parses `cmd package resolve-activity --brief …`: the last non-blank line, when it is a
/// component `pkg/cls`, becomes `(package, fully qualified class)`. `None` for
/// `No activity found` or anything else.
pub fn parse_resolve_activity_brief(text: &str) -> Option<(String, String)> {
    let last = text.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    if last.contains(char::is_whitespace) {
        return None;
    }
    parse_component(last)
}

/// Splits a component name `pkg/cls` into `(package, fully qualified class)`, expanding the short
/// form `pkg/.Cls` to `pkg.Cls`. Trailing `}` (from `ActivityRecord{…}` text) is dropped. `None`
/// when either half is empty or contains whitespace.
pub fn parse_component(component: &str) -> Option<(String, String)> {
    let component = component.trim().trim_end_matches('}');
    let (package, class) = component.split_once('/')?;
    let valid = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace) && s != ".";
    if !valid(package) || !valid(class) || class.contains('/') {
        return None;
    }
    let class = if class.starts_with('.') {
        format!("{package}{class}")
    } else {
        class.to_string()
    };
    Some((package.to_string(), class))
}

/// One activity line of the `Activity Resolver Table:` of `dumpsys package PKG`: `HASH PKG/CLS`,
/// then ` filter HASH` and the filter's indented `Action: "…"` / `Category: "…"` lines when the
/// phone prints filter details, else nothing or ` (N filters)` (collapsed form). Sources: appium-adb
/// `parseLaunchableActivityNames` and its test captures
/// `tests/fixtures/packages/appium-adb-dumpsys-package-activity-resolver-*.txt`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolverActivity {
    /// Package of the component.
    pub package: String,
    /// Fully qualified class.
    pub class: String,
    /// The key line above it, without `:` (an action under `Non-Data Actions:`, a MIME type or
    /// scheme elsewhere).
    pub key: String,
    /// `Action:` values of its filter (empty in the collapsed form).
    pub actions: Vec<String>,
    /// `Category:` values of its filter (empty in the collapsed form).
    pub categories: Vec<String>,
}

/// Parses the `Activity Resolver Table:` section of `dumpsys package [-f] PKG` (it ends at the
/// next line indented no deeper than its header). Empty when the section is absent (unknown
/// package, error text).
pub fn parse_activity_resolver_table(text: &str) -> Vec<ResolverActivity> {
    let mut out: Vec<ResolverActivity> = Vec::new();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut header: Option<usize> = None;
    let mut key = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match header {
            None => {
                if t == "Activity Resolver Table:" {
                    header = Some(indent(line));
                }
                continue;
            }
            Some(h) if indent(line) <= h => break,
            Some(_) => {}
        }
        let quoted = |prefix: &str| {
            t.strip_prefix(prefix)
                .map(|v| v.trim().trim_matches('"').to_string())
        };
        if let Some(a) = quoted("Action:") {
            if let Some(last) = out.last_mut() {
                last.actions.push(a);
            }
            continue;
        }
        if let Some(c) = quoted("Category:") {
            if let Some(last) = out.last_mut() {
                last.categories.push(c);
            }
            continue;
        }
        let mut words = t.split_whitespace();
        let (first, second) = (words.next(), words.next());
        let hash = first.is_some_and(|w| w.chars().all(|c| c.is_ascii_hexdigit()));
        if let (true, Some(comp)) = (hash, second) {
            if let Some((package, class)) = parse_component(comp) {
                out.push(ResolverActivity {
                    package,
                    class,
                    key: key.clone(),
                    actions: Vec::new(),
                    categories: Vec::new(),
                });
                continue;
            }
        }
        if let Some(k) = t.strip_suffix(':') {
            key = k.to_string();
        }
    }
    out
}

/// The activity of `pkg` that `dumpsys package PKG` shows with an `android.intent.action.MAIN`
/// filter in `category`, as a fully qualified class. When the phone printed no filter details
/// (collapsed form: no `Action:` line in the whole table) every `android.intent.action.MAIN`
/// activity of `pkg` counts as in `android.intent.category.LAUNCHER`, as appium-adb does for
/// that form; it can never prove LEANBACK_LAUNCHER.
pub fn resolver_main_activity(
    table: &[ResolverActivity],
    pkg: &str,
    category: &str,
) -> Option<String> {
    const MAIN: &str = "android.intent.action.MAIN";
    let detailed = table.iter().any(|a| !a.actions.is_empty());
    table
        .iter()
        .filter(|a| a.package == pkg)
        .find(|a| {
            if detailed {
                a.actions.iter().any(|x| x == MAIN) && a.categories.iter().any(|c| c == category)
            } else {
                a.key == MAIN && category == "android.intent.category.LAUNCHER"
            }
        })
        .map(|a| a.class.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERSIONCODE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/packages/appium-adb-pm-list-packages-show-versioncode.txt"
    ));

    const RESOLVER_FILTERS: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/packages/appium-adb-dumpsys-package-activity-resolver-filters.txt"
    ));
    const RESOLVER_COLLAPSED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/packages/appium-adb-dumpsys-package-activity-resolver-collapsed.txt"
    ));

    #[test]
    fn activity_resolver_table_with_filter_details() {
        let table = parse_activity_resolver_table(RESOLVER_FILTERS);
        let pkg = "com.sunpower.energylink.commissioning2";
        assert_eq!(table.len(), 4);
        assert_eq!(table[0].key, "com.sunpower.elc2");
        assert_eq!(table[1].key, "");
        assert_eq!(table[2].class, format!("{pkg}.MainActivity2"));
        assert_eq!(table[2].key, "android.intent.action.MAIN");
        assert_eq!(table[2].categories, ["android.intent.category.BROWSABLE"]);
        assert_eq!(table[3].categories, ["android.intent.category.LAUNCHER"]);
        // MainActivity2 has MAIN but not LAUNCHER: only MainActivity launches.
        assert_eq!(
            resolver_main_activity(&table, pkg, "android.intent.category.LAUNCHER"),
            Some(format!("{pkg}.MainActivity"))
        );
        assert_eq!(
            resolver_main_activity(&table, pkg, "android.intent.category.LEANBACK_LAUNCHER"),
            None
        );
        assert_eq!(
            resolver_main_activity(&table, "com.other", "android.intent.category.LAUNCHER"),
            None
        );
    }

    #[test]
    fn activity_resolver_table_collapsed() {
        let table = parse_activity_resolver_table(RESOLVER_COLLAPSED);
        let pkg = "com.example.android.contactmanager";
        let classes: Vec<&str> = table.iter().map(|a| a.class.as_str()).collect();
        // Stops at `Key Set Manager:` (indented like the table header).
        assert_eq!(
            classes,
            [
                "com.example.android.contactmanager.ContactManager2",
                "com.example.android.contactmanager.ContactManager3",
                "com.example.android.contactmanager.ContactManager",
            ]
        );
        assert!(table.iter().all(|a| a.actions.is_empty()));
        assert_eq!(
            resolver_main_activity(&table, pkg, "android.intent.category.LAUNCHER"),
            Some(format!("{pkg}.ContactManager2"))
        );
        assert_eq!(
            resolver_main_activity(&table, pkg, "android.intent.category.LEANBACK_LAUNCHER"),
            None
        );
    }

    #[test]
    fn activity_resolver_table_absent() {
        assert!(
            parse_activity_resolver_table("Dexopt state:\n  Unable to find package: a.b\n")
                .is_empty()
        );
        assert!(parse_activity_resolver_table("").is_empty());
    }

    #[test]
    fn show_versioncode_capture() {
        let list = parse_pm_list_packages(VERSIONCODE);
        let got: Vec<(&str, Option<u64>)> = list
            .iter()
            .map(|p| (p.package.as_str(), p.version_code))
            .collect();
        assert_eq!(
            got,
            [
                ("com.android.managedprovisioning", Some(35)),
                ("com.google.android.apps.wallpaper.nexus", Some(170000000)),
                ("com.android.chrome", Some(636771932)),
            ]
        );
        assert!(list.iter().all(|p| p.apk_path.is_none()));
    }

    #[test]
    fn apk_paths_with_equals_signs() {
        let text = "package:/data/app/~~4f3Q==/com.foo-Zx9_Ab==/base.apk=com.foo versionCode:12 uid:10123\n\
                    package:/system/priv-app/Settings/Settings.apk=com.android.settings\n\
                    WARNING: linker: something\npackage:\npackage:com.bar\n";
        let list = parse_pm_list_packages(text);
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].package, "com.foo");
        assert_eq!(
            list[0].apk_path.as_deref(),
            Some("/data/app/~~4f3Q==/com.foo-Zx9_Ab==/base.apk")
        );
        assert_eq!(list[0].version_code, Some(12));
        assert_eq!(
            list[1].apk_path.as_deref(),
            Some("/system/priv-app/Settings/Settings.apk")
        );
        assert_eq!(
            (list[2].package.as_str(), list[2].version_code),
            ("com.bar", None)
        );
    }

    #[test]
    fn resolve_activity_brief() {
        let out = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n\
                   com.android.settings/.Settings\n";
        assert_eq!(
            parse_resolve_activity_brief(out),
            Some((
                "com.android.settings".into(),
                "com.android.settings.Settings".into()
            ))
        );
        let full = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\r\n\
                    com.google.android.youtube/com.google.android.apps.youtube.app.watchwhile.WatchWhileActivity\r\n";
        assert_eq!(
            parse_resolve_activity_brief(full).map(|c| c.1),
            Some("com.google.android.apps.youtube.app.watchwhile.WatchWhileActivity".into())
        );
        assert_eq!(parse_resolve_activity_brief("No activity found\n"), None);
        assert_eq!(parse_resolve_activity_brief(""), None);
        assert_eq!(parse_resolve_activity_brief("/.X"), None);
        assert_eq!(parse_component("a/./b"), None);
        assert_eq!(
            parse_component("com.x/.Main}"),
            Some(("com.x".into(), "com.x.Main".into()))
        );
    }
}
