//! The sim's program output against real captures (`tests/fixtures/`, see `SOURCES.tsv`): both go
//! through the connector's own parsers (`xagent_adb_connector::device::parse`) and must give the
//! same *kind* of result (the same fields present, the same shapes). The sim code itself never
//! calls these parsers; only this test does. For `uiautomator dump` the attribute names are
//! compared node by node with the real platform dumps, and the structure rules are checked.

use std::collections::BTreeMap;

use xagent_adb_connector::device::parse::{
    battery, displays, getprop, power, text::decode_output, uiautomator, window, wm,
};
use xagent_adb_sim::persona::Persona;
use xagent_adb_sim::sh::{Fd, Shell, Stdin};
use xagent_adb_sim::Phone;

fn fixture(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    decode_output(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

fn phone(persona: &str) -> Phone {
    Phone::new(Persona::load(persona).unwrap(), "SIMFIX01", "")
}

/// stdout of one command line on the sim.
fn sim(phone: &Phone, line: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut shell = Shell::new(phone.clone(), tx, Stdin::Empty);
        shell.run_line(line).await;
        drop(shell);
        let mut out = Vec::new();
        while let Some((fd, bytes)) = rx.recv().await {
            if fd == Fd::Out {
                out.extend(bytes);
            }
        }
        String::from_utf8_lossy(&out).to_string()
    })
}

/// Properties tools read; each is in every modern capture (asserted) and must be in the sim.
const CORE_PROPS: &[&str] = &[
    "ro.build.version.release",
    "ro.build.version.sdk",
    "ro.build.version.incremental",
    "ro.build.version.security_patch",
    "ro.build.fingerprint",
    "ro.build.id",
    "ro.build.type",
    "ro.product.model",
    "ro.product.manufacturer",
    "ro.product.brand",
    "ro.product.name",
    "ro.product.device",
    "ro.product.cpu.abi",
    "ro.hardware",
    "ro.sf.lcd_density",
    "ro.serialno",
    "sys.boot_completed",
    "persist.sys.timezone",
];

#[test]
fn getprop_parses_like_modern_captures() {
    let captures = [
        "getprop/motorola-edge20-berlin-android13.txt",
        "getprop/xiaomi-poco-f6-peridot-lineage-android15.txt",
    ];
    let check = |name: &str, props: &BTreeMap<String, String>| {
        for key in CORE_PROPS {
            assert!(props.contains_key(*key), "{name} lacks {key}");
        }
        let sdk: u32 = props["ro.build.version.sdk"].parse().unwrap();
        assert!(sdk >= 30, "{name}: sdk {sdk}");
        let fp = &props["ro.build.fingerprint"];
        assert_eq!(fp.matches('/').count(), 5, "{name}: fingerprint {fp}");
        assert_eq!(fp.matches(':').count(), 2, "{name}: fingerprint {fp}");
    };
    for c in captures {
        check(c, &getprop::parse_getprop(&fixture(c)));
    }
    for persona in ["pixel-android14", "samsung-android13", "foldable-android14"] {
        let p = phone(persona);
        let all = getprop::parse_getprop(&sim(&p, "getprop"));
        check(persona, &all);
        // `getprop KEY` prints the bare value, like the real one.
        assert_eq!(
            sim(&p, "getprop ro.build.version.sdk").trim(),
            all["ro.build.version.sdk"]
        );
    }
}

#[test]
fn wm_size_parses_like_the_capture() {
    let real = wm::parse_wm_size(&fixture("wm/samsung-s24-wm-size.txt")).unwrap();
    let p = phone("pixel-android14");
    let sim_size = wm::parse_wm_size(&sim(&p, "wm size")).unwrap();
    assert_eq!(
        (real.physical.is_some(), real.override_size.is_some()),
        (true, false)
    );
    assert_eq!(
        (sim_size.physical, sim_size.override_size),
        (Some((1080, 2400)), None)
    );
    sim(&p, "wm size 540x1200");
    let over = wm::parse_wm_size(&sim(&p, "wm size")).unwrap();
    assert_eq!(
        (over.physical, over.override_size),
        (Some((1080, 2400)), Some((540, 1200)))
    );
    let density = wm::parse_wm_density(&fixture("wm/samsung-s24-wm-density.txt")).unwrap();
    let sim_density = wm::parse_wm_density(&sim(&p, "wm density")).unwrap();
    assert_eq!(density.physical.is_some(), sim_density.physical.is_some());
}

/// Which optional fields of a parsed battery are present.
fn battery_shape(b: &battery::Battery) -> [bool; 6] {
    [
        b.level.is_some(),
        b.scale.is_some(),
        b.percent.is_some(),
        b.status.is_some(),
        !b.plugged.is_empty(),
        b.temperature_deci_c.is_some(),
    ]
}

#[test]
fn dumpsys_battery_parses_like_captures() {
    for persona in ["pixel-android14", "legacy-android6"] {
        let p = phone(persona);
        p.with(|s| s.battery_level = 80);
        let ours = battery::parse_dumpsys_battery(&sim(&p, "dumpsys battery")).unwrap();
        assert_eq!(ours.percent, Some(80), "{persona}");
        for c in [
            "battery/redmi-note14-hyperos3-miuibatteryservice.txt",
            "battery/samsung-s24-oneui-extended.txt",
        ] {
            let real = battery::parse_dumpsys_battery(&fixture(c)).unwrap();
            assert_eq!(
                battery_shape(&ours),
                battery_shape(&real),
                "{persona} vs {c}"
            );
        }
    }
}

#[test]
fn dumpsys_window_focus_parses_like_captures() {
    let p = phone("pixel-android14");
    sim(&p, "am start -n com.example.notes/.MainActivity");
    for cmd in ["dumpsys window windows", "dumpsys window"] {
        let f = displays::parse_current_focus(&sim(&p, cmd)).unwrap();
        assert_eq!(f.package.as_deref(), Some("com.example.notes"), "{cmd}");
        assert_eq!(
            f.activity.as_deref(),
            Some("com.example.notes.MainActivity"),
            "{cmd}"
        );
    }
    // Android 11+ windows sections carry no focus line: the real ones and the sim's both give
    // the focus from the window list (field bug 61); Android 6 keeps the line.
    let ours = sim(&p, "dumpsys window windows");
    assert!(!ours.contains("mCurrentFocus="), "{ours}");
    let legacy = phone("legacy-android6");
    sim(&legacy, "am start -n com.example.notes/.MainActivity");
    assert!(sim(&legacy, "dumpsys window windows").contains("  mCurrentFocus=Window{"));
    for c in [
        "window/avc-dumpsys-window-windows-jb-emulator.txt",
        "window/android8-grep-mcurrentfocus-mfocusedapp-appwindowtoken.txt",
        "window/appium-android12-emulator-dumpsys-window-windows.txt",
        "window/appium-android13-emulator-dumpsys-window-windows.txt",
    ] {
        let f = displays::parse_current_focus(&fixture(c)).unwrap();
        assert!(f.package.is_some() && f.activity.is_some(), "{c}: {f:?}");
    }
    // A framework dialog over the app, in the real Android 11 list and in the sim's.
    let real = displays::parse_current_focus(&fixture(
        "window/appium-android11-emulator-dumpsys-window-windows.txt",
    ))
    .and_then(|f| f.dialog)
    .expect("the ANR dialog");
    p.with(|s| {
        s.app_dialog = Some(xagent_adb_sim::framework::AppDialog {
            kind: xagent_adb_sim::framework::DialogKind::Anr,
            process: "com.example.notes".into(),
        })
    });
    let ours = displays::parse_current_focus(&sim(&p, "dumpsys window windows"))
        .and_then(|f| f.dialog)
        .expect("the sim's ANR dialog");
    assert_eq!(
        (ours.kind, real.kind),
        (real.kind, window::DialogKind::NotResponding)
    );
    p.with(|s| s.app_dialog = None);
    let real = window::parse_resumed_activity(&fixture(
        "activity/mtk-tablet-android13-dumpsys-activity-activities.txt",
    ));
    let ours = window::parse_resumed_activity(&sim(&p, "dumpsys activity activities"));
    assert!(real.is_some());
    assert_eq!(
        ours,
        Some((
            "com.example.notes".into(),
            "com.example.notes.MainActivity".into()
        ))
    );
}

#[test]
fn dumpsys_power_parses_like_captures() {
    let real = power::parse_screen_on(&fixture(
        "power/phone-720x1612-dumpsys-power-awake-utf16le.txt",
    ));
    assert_eq!(real, Some(true));
    let old = power::parse_screen_on(&fixture(
        "power/android4.4-display-power-state-fragment.txt",
    ));
    assert!(old.is_some());
    let p = phone("pixel-android14");
    assert_eq!(
        power::parse_screen_on(&sim(&p, "dumpsys power")),
        Some(true)
    );
    p.with(|s| s.screen_on = false);
    assert_eq!(
        power::parse_screen_on(&sim(&p, "dumpsys power")),
        Some(false)
    );
}

/// XML shape of a dump: attribute names per node, in document order, and structure rules.
mod xml {
    use quick_xml::events::{BytesStart, Event};

    pub struct NodeShape {
        pub attrs: Vec<String>,
        pub class: String,
        pub bounds: String,
        pub index: String,
        pub position: usize,
    }

    pub struct Shape {
        pub rotation: String,
        pub hierarchy_attrs: Vec<String>,
        pub nodes: Vec<NodeShape>,
        pub max_depth: usize,
        pub other_elements: Vec<String>,
    }

    fn attrs(e: &BytesStart) -> Vec<(String, String)> {
        e.attributes()
            .map(|a| {
                let a = a.unwrap();
                let key = a.key.as_ref().to_string();
                (key, a.value.to_string())
            })
            .collect()
    }

    pub fn shape(text: &str) -> Shape {
        let mut reader = quick_xml::Reader::from_str(text);
        let mut s = Shape {
            rotation: String::new(),
            hierarchy_attrs: Vec::new(),
            nodes: Vec::new(),
            max_depth: 0,
            other_elements: Vec::new(),
        };
        // Children seen so far at each open depth (for the `index` rule).
        let mut siblings: Vec<usize> = vec![0];
        loop {
            let ev = reader.read_event().unwrap();
            let (e, empty) = match &ev {
                Event::Start(e) => (e.clone(), false),
                Event::Empty(e) => (e.clone(), true),
                Event::End(_) => {
                    siblings.pop();
                    continue;
                }
                Event::Eof => break,
                _ => continue,
            };
            let name = e.name().as_ref().to_string();
            let a = attrs(&e);
            match name.as_str() {
                "hierarchy" => {
                    s.hierarchy_attrs = a.iter().map(|(k, _)| k.clone()).collect();
                    s.rotation = a
                        .iter()
                        .find(|(k, _)| k == "rotation")
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                }
                "node" => {
                    let get = |k: &str| {
                        a.iter()
                            .find(|(n, _)| n == k)
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default()
                    };
                    let position = *siblings.last().unwrap();
                    *siblings.last_mut().unwrap() += 1;
                    s.max_depth = s.max_depth.max(siblings.len() - 1);
                    s.nodes.push(NodeShape {
                        attrs: a.iter().map(|(k, _)| k.clone()).collect(),
                        class: get("class"),
                        bounds: get("bounds"),
                        index: get("index"),
                        position,
                    });
                }
                other => s.other_elements.push(other.to_string()),
            }
            if !empty {
                siblings.push(0);
            }
        }
        s
    }

    /// Root `<hierarchy rotation="0..3">`, only `<node>` below it, `bounds="[x1,y1][x2,y2]"`
    /// with x1<=x2, y1<=y2, `index` >= position among siblings.
    pub fn assert_rules(name: &str, s: &Shape) {
        assert_eq!(s.hierarchy_attrs, ["rotation"], "{name}");
        assert!(
            ["0", "1", "2", "3"].contains(&s.rotation.as_str()),
            "{name}: rotation"
        );
        assert!(
            s.other_elements.is_empty(),
            "{name}: {:?}",
            s.other_elements
        );
        let re = regex::Regex::new(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$").unwrap();
        for n in &s.nodes {
            let c = re
                .captures(&n.bounds)
                .unwrap_or_else(|| panic!("{name}: bounds {:?}", n.bounds));
            let v: Vec<i32> = (1..=4).map(|i| c[i].parse().unwrap()).collect();
            assert!(v[0] <= v[2] && v[1] <= v[3], "{name}: {}", n.bounds);
            // AOSP numbers children in the accessibility tree and skips invisible ones in the
            // dump, so `index` may jump but never falls behind the position.
            let index: usize = n.index.parse().unwrap();
            assert!(index >= n.position, "{name}: index of {}", n.class);
        }
    }
}

/// The attribute names without the optional leading `NAF` (written only for clickable nodes
/// nothing describes, AOSP `AccessibilityNodeInfoDumper.nafCheck`).
fn without_naf(attrs: &[String]) -> &[String] {
    match attrs.first() {
        Some(a) if a == "NAF" => &attrs[1..],
        _ => attrs,
    }
}

#[test]
fn uiautomator_dump_matches_real_platform_dumps() {
    // Dumps written by the platform `uiautomator dump` (AOSP AccessibilityNodeInfoDumper).
    let reals = [
        "uiautomator/emulator-gmail-alert-dialog.xml",
        "uiautomator/bluestacks-rotation1-portrait-bounds-1080x1920.xml",
        "uiautomator/avc-api27-nexuslauncher-pretty.xml",
    ];
    let mut reference: Option<Vec<String>> = None;
    for r in reals {
        let text = fixture(r);
        let shape = xml::shape(&text);
        xml::assert_rules(r, &shape);
        let attrs = without_naf(&shape.nodes[0].attrs).to_vec();
        for n in &shape.nodes {
            assert_eq!(
                without_naf(&n.attrs),
                attrs,
                "{r}: every node has the same attribute list"
            );
        }
        if let Some(prev) = &reference {
            assert_eq!(prev, &attrs, "{r}");
        }
        reference = Some(attrs);
        assert!(uiautomator::parse_uiautomator_dump(&text).is_ok(), "{r}");
    }
    let reference = reference.unwrap();
    let p = phone("pixel-android14");
    for (setup, rotation) in [
        ("", 0),
        ("am start -n com.example.notes/.MainActivity", 0),
        ("", 1),
    ] {
        sim(&p, setup);
        p.with(|s| s.rotation = rotation);
        let out = sim(&p, "uiautomator dump /dev/tty");
        let dump = out
            .trim_end()
            .strip_suffix("UI hierchary dumped to: /dev/tty")
            .unwrap();
        let shape = xml::shape(dump);
        xml::assert_rules("sim", &shape);
        assert_eq!(shape.rotation, rotation.to_string());
        assert!(
            shape.nodes.len() > 5 && shape.max_depth >= 3,
            "nested: {}",
            shape.nodes.len()
        );
        for n in &shape.nodes {
            assert_eq!(
                without_naf(&n.attrs),
                reference,
                "sim node {} attributes",
                n.class
            );
        }
        assert!(
            dump.starts_with("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy")
        );
        let parsed = uiautomator::parse_uiautomator_dump(dump).unwrap();
        assert_eq!(parsed.rotation, rotation);
        assert_eq!(parsed.nodes.len(), shape.nodes.len());
    }
}
