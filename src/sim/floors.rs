//! The crate's floors (see the map in the crate root), checked against the source: a file may
//! name modules of its own floor and the floors below, never of a floor above, and the
//! top-level modules form no cycle. Every `crate::…` and `super::…` path in code counts
//! (comments do not); a new top-level module fails here until it is given a floor.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Floors, lowest first: name and the top-level modules on it (`lib` is the crate root).
const FLOORS: &[(&str, &[&str])] = &[
    (
        "model",
        &[
            "persona",
            "props",
            "vfs",
            "auth",
            "script",
            "ui",
            "apps",
            "screens",
            "font",
            "render",
            "timing",
            "input_args",
            "media",
            "sync_fault",
            "install_sessions",
            "framework",
            "enabled_state",
            "evdev",
        ],
    ),
    ("phone", &["phone"]),
    ("programs", &["programs"]),
    ("shell", &["sh"]),
    (
        "transport",
        &["stream", "services", "transport", "mdns", "wireless"],
    ),
    (
        "control",
        &["control", "control_json", "control_storage", "lib"],
    ),
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, mods)| mods.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Module path of a file: `lib.rs` → `[]`, `phone.rs` → `[phone]`, `programs/mod.rs` →
/// `[programs]`, `programs/am.rs` → `[programs, am]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// First segments after a path prefix: `x` in `…::x::y`, `a` and `b` in `…::{a::c, b}`.
fn first_segments(rest: &str) -> Vec<String> {
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident_at(rest).to_string()];
    };
    let (mut depth, mut item_start, mut out) = (0, true, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && (c.is_alphanumeric() || c == '_') => {
                out.push(ident_at(&group[i..]).to_string());
                item_start = false;
            }
            _ => {}
        }
    }
    out
}

/// Module paths a file names, each cut after its first segment past the prefix
/// (`crate::phone::Phone` → `[phone]`, `super::dumpsys::x` in `programs/am.rs` →
/// `[programs, dumpsys]`). `super::` resolves against the file's module path, and inside an
/// inline `mod NAME {` (a file's test module) against that path plus `NAME`.
fn referenced_paths(code: &str, file_path: &[String]) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let mut path = file_path.to_vec();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        if let Some(name) = line
            .strip_prefix("mod ")
            .or_else(|| line.strip_prefix("pub mod "))
            .filter(|rest| rest.trim_end().ends_with('{'))
        {
            path = file_path.to_vec();
            path.push(ident_at(name).to_string());
        }
        let mut rest = line;
        while let Some(at) = ["crate::", "super::"]
            .iter()
            .filter_map(|prefix| rest.find(prefix))
            .min()
        {
            let preceded_by_ident = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            let mut tail = &rest[at..];
            let mut base = path.clone();
            if let Some(t) = tail.strip_prefix("crate::") {
                base.clear();
                tail = t;
            } else {
                while let Some(t) = tail.strip_prefix("super::") {
                    base.pop();
                    tail = t;
                }
            }
            if !preceded_by_ident {
                for seg in first_segments(tail) {
                    let mut target = base.clone();
                    if !seg.is_empty() {
                        target.push(seg);
                    }
                    if !target.is_empty() {
                        found.insert(target);
                    }
                }
            }
            rest = tail;
        }
    }
    found
}

/// Panics on a cycle in `edges` (node → nodes it imports).
fn assert_acyclic(edges: &BTreeMap<String, BTreeSet<String>>) {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(i) = stack.iter().position(|s| s == m) {
            panic!("import cycle: {} -> {m}", stack[i..].join(" -> "));
        }
        if !done.insert(m.to_string()) {
            return;
        }
        stack.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, stack, done);
        }
        stack.pop();
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, edges, &mut Vec::new(), &mut done);
    }
}

#[test]
fn no_file_imports_from_a_higher_floor_and_nothing_loops() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(root, &mut files);
    // This checker is test-only and quotes import lines in its own test.
    files.retain(|f| !f.ends_with("floors.rs"));
    assert!(files.len() > 20, "found only {} files", files.len());
    let file_paths: BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_path(f.strip_prefix(root).unwrap()))
        .collect();
    // Top-level module → top-level modules it imports; and, inside a directory module
    // (`programs/`, `sh/`, `services/`), file → sibling files it imports. Files may use their
    // own `mod.rs` (the directory's shared types); siblings must not loop.
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut errors = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap();
        let path = module_path(rel);
        let module = path.first().cloned().unwrap_or_else(|| "lib".into());
        let Some(floor) = floor_of(&module) else {
            errors.push(format!("{}: module `{module}` has no floor", rel.display()));
            continue;
        };
        let code = std::fs::read_to_string(file).unwrap();
        for target in referenced_paths(&code, &path) {
            let top = &target[0];
            if *top == module {
                let sibling = path.len() == 2 && target.len() == 2 && target != path;
                if sibling && file_paths.contains(&target) {
                    siblings
                        .entry(path.join("::"))
                        .or_default()
                        .insert(target.join("::"));
                }
                continue;
            }
            match floor_of(top) {
                None => errors.push(format!(
                    "{}: names `{top}`, which has no floor",
                    rel.display()
                )),
                Some(f) if f > floor => errors.push(format!(
                    "{} (floor {}) imports `{top}` from floor {}",
                    rel.display(),
                    FLOORS[floor].0,
                    FLOORS[f].0
                )),
                Some(_) => {}
            }
            modules
                .entry(module.clone())
                .or_default()
                .insert(top.clone());
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Same-floor imports are allowed but must not loop.
    assert_acyclic(&modules);
    assert_acyclic(&siblings);
}

#[test]
fn the_checker_sees_imports() {
    let path = vec!["programs".to_string(), "am".to_string()];
    let code = "use super::Output;\nuse crate::phone::{Phone, PhoneState};\n\
                use crate::{apps, ui::Node};\n// use crate::control;\n\
                let x = super::super::sh::run();\nsuper::dumpsys::ident(x);\n\
                mod tests {\n    use super::*;\n}\n";
    let found: Vec<String> = referenced_paths(code, &path)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "apps",
            "phone",
            "programs::Output",
            "programs::am",
            "programs::dumpsys",
            "sh",
            "ui"
        ]
    );
}
