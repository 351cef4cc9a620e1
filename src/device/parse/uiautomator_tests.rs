//! Tests of [`super`] against real dumps in `tests/fixtures/uiautomator/` and the error strings
//! of field bugs 9 and 10.

use super::*;

fn parse(text: &str) -> UiDump {
    match parse_uiautomator_dump(text) {
        Ok(dump) => dump,
        Err(e) => panic!("dump failed: {e}"),
    }
}

fn by_text<'a>(dump: &'a UiDump, text: &str) -> &'a UiNode {
    match dump.nodes.iter().find(|n| n.text == text) {
        Some(n) => n,
        None => panic!("no node with text {text:?}"),
    }
}

#[test]
fn cr_cr_lf_dump_with_display_id_and_tty_trailer() {
    let raw = fixture!("uiautomator/u2-landscape-game-1600x900-display-id.xml");
    let dump = parse(&format!("{raw}UI hierchary dumped to: /dev/tty\n"));
    assert_eq!(dump.rotation, 0);
    assert_eq!(dump.nodes.len(), 4);
    let root = &dump.nodes[0];
    assert_eq!((root.index_path.as_str(), root.depth), ("0", 0));
    assert_eq!(
        root.bounds,
        Bounds {
            left: 0,
            top: 0,
            right: 1600,
            bottom: 900
        }
    );
    assert_eq!(root.package, "com.supercell.clashofclans");
    assert_eq!(root.display_id, Some(0));
    assert!(root.enabled && !root.clickable);
    assert_eq!(dump.nodes[2].resource_id, "android:id/content");
    assert_eq!(
        (dump.nodes[2].index_path.as_str(), dump.nodes[2].depth),
        ("0/0/0", 2)
    );
}

#[test]
fn multi_window_roots_get_distinct_paths() {
    let dump = parse(fixture!(
        "uiautomator/u2-multiwindow-display-id-attr-1080.xml"
    ));
    assert_eq!(dump.nodes.len(), 116);
    let roots: Vec<&UiNode> = dump.nodes.iter().filter(|n| n.depth == 0).collect();
    assert_eq!(roots.len(), 2);
    assert_eq!(
        (roots[0].index_path.as_str(), roots[0].package.as_str()),
        ("0", "com.android.systemui")
    );
    assert_eq!(roots[0].bounds.height(), 66);
    assert_eq!(
        (roots[1].index_path.as_str(), roots[1].package.as_str()),
        ("1", "com.brella")
    );
    assert_eq!(
        roots[1].bounds,
        Bounds {
            left: 0,
            top: 0,
            right: 1080,
            bottom: 2220
        }
    );
    let clock = by_text(&dump, "1:53");
    assert_eq!(clock.resource_id, "com.android.systemui:id/clock");
    assert_eq!(clock.content_desc, "1:53\u{202F}PM");
    assert!(dump.nodes.iter().all(|n| n.display_id == Some(0)));
}

#[test]
fn minidom_pretty_sorted_attributes_with_naf() {
    let dump = parse(fixture!(
        "uiautomator/huawei-launcher-minidom-pretty-naf.xml"
    ));
    assert_eq!(dump.nodes.len(), 13);
    assert_eq!(dump.nodes[1].content_desc, "第 1 屏，共 4 屏");
    assert!(dump.nodes[1].scrollable);
    let divider = match dump
        .nodes
        .iter()
        .find(|n| n.resource_id.ends_with(":id/dock_divider"))
    {
        Some(n) => n,
        None => panic!("dock divider"),
    };
    assert!(divider.clickable && divider.focusable && !divider.long_clickable);
    assert_eq!(
        divider.bounds,
        Bounds {
            left: 0,
            top: 1083,
            right: 720,
            bottom: 1155
        }
    );
    assert_eq!(by_text(&dump, "梦幻西游").bounds.center(), (96, 168));
}

#[test]
fn pretty_printed_api27_launcher() {
    let dump = parse(fixture!("uiautomator/avc-api27-nexuslauncher-pretty.xml"));
    assert_eq!(dump.nodes.len(), 29);
    let clock = by_text(&dump, "Sunday, May 19");
    assert_eq!(
        clock.resource_id,
        "com.google.android.apps.nexuslauncher:id/clock"
    );
    assert!(clock.clickable);
    assert_eq!(
        by_text(&dump, "56°F").bounds,
        Bounds {
            left: 758,
            top: 172,
            right: 887,
            bottom: 257
        }
    );
    assert_eq!(by_text(&dump, "Phone").resource_id, "");
}

#[test]
fn api17_without_resource_id() {
    let dump = parse(fixture!(
        "uiautomator/avc-api17-chinese-tablet-no-resource-id.xml"
    ));
    assert_eq!(dump.nodes.len(), 21);
    assert!(dump.nodes.iter().all(|n| n.resource_id.is_empty()));
    assert_eq!(dump.nodes[0].package, "android");
    assert_eq!(
        by_text(&dump, "语言").bounds,
        Bounds {
            left: 401,
            top: 304,
            right: 609,
            bottom: 351
        }
    );
    assert_eq!(by_text(&dump, "6:40").bounds.width(), 342);
}

#[test]
fn emoji_entities_and_newlines() {
    let dump = parse(fixture!(
        "uiautomator/systemui-notification-shade-emoji-entities-720x1612.xml"
    ));
    assert_eq!(dump.nodes.len(), 234);
    let row = by_text(&dump, "\u{1F534} Sooneeta");
    assert_eq!(row.resource_id, "android:id/title");
    assert_eq!(
        row.bounds,
        Bounds {
            left: 128,
            top: 586,
            right: 244,
            bottom: 614
        }
    );
    assert!(dump.nodes.iter().any(|n| n.text.starts_with(
        "Nifty above 23,900, Sensex up 200 pts\u{1F4C8}\n\n\u{1F539}KPIT Tech slips 10%"
    )));
    assert_eq!(
        by_text(&dump, "Fully charged").package,
        "com.android.systemui"
    );
}

#[test]
fn rotation_and_dialog_roots() {
    let blue = parse(fixture!(
        "uiautomator/bluestacks-rotation1-portrait-bounds-1080x1920.xml"
    ));
    assert_eq!((blue.rotation, blue.nodes.len()), (1, 126));
    assert_eq!(
        blue.nodes[0].bounds,
        Bounds {
            left: 0,
            top: 0,
            right: 1080,
            bottom: 1920
        }
    );
    assert_eq!(
        by_text(&blue, "31.9K").resource_id,
        "net.spotlightlabs.spotlight:id/tvArticleCount"
    );

    let yt = parse(fixture!(
        "uiautomator/u2-youtube-processing-dialog-emulator-720x1280.xml"
    ));
    assert_eq!(yt.nodes.len(), 7);
    assert_eq!(
        yt.nodes[0].bounds,
        Bounds {
            left: 180,
            top: 484,
            right: 539,
            bottom: 795
        }
    );
    assert_eq!(by_text(&yt, "Processing").class, "android.widget.TextView");
    assert!(yt
        .nodes
        .iter()
        .all(|n| n.hint.is_empty() && n.display_id.is_none()));

    let gm = parse(fixture!("uiautomator/emulator-gmail-alert-dialog.xml"));
    assert_eq!(gm.nodes.len(), 12);
    let ok = by_text(&gm, "OK");
    assert_eq!(
        (ok.resource_id.as_str(), ok.clickable),
        ("android:id/button1", true)
    );
    assert!(ok.bounds.contains(888, 1205) && !ok.bounds.contains(976, 1205));
    assert_eq!(
        by_text(&gm, "Please add at least one email address.").resource_id,
        "android:id/message"
    );
}

#[test]
fn appium_page_source_uses_element_names() {
    let dump = parse(fixture!(
        "other/appium-pagesource-ivi-vehiclecontrol-1920x957.xml"
    ));
    assert_eq!(dump.nodes.len(), 12);
    assert_eq!(dump.nodes[0].class, "android.view.ViewGroup");
    assert_eq!(dump.nodes[0].resource_id, "android:id/content");
    assert_eq!(
        by_text(&dump, "24.0").bounds,
        Bounds {
            left: 874,
            top: 841,
            right: 1528,
            bottom: 929
        }
    );
    assert_eq!(by_text(&dump, "자동").package, "ai.umos.vehiclecontrol");
}

#[test]
fn field_bugs_9_and_10_errors_are_never_empty_trees() {
    assert_eq!(
        parse_uiautomator_dump("ERROR: could not get idle state.\n"),
        Err(UiDumpError::NotIdle)
    );
    assert_eq!(
        parse_uiautomator_dump("ERROR: null root node returned by UiTestAutomationBridge.\r\n"),
        Err(UiDumpError::NullRoot)
    );
    let busy = "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.\
                IAccessibilityServiceClient$Stub$Proxy@1f0a already registered!\n\tat android.os.Parcel.readException";
    assert_eq!(
        parse_uiautomator_dump(busy),
        Err(UiDumpError::AutomationBusy)
    );
    assert_eq!(
        parse_uiautomator_dump("  /system/bin/sh: uiautomator: not found\n"),
        Err(UiDumpError::NoXml {
            output: "/system/bin/sh: uiautomator: not found".into()
        })
    );
    assert_eq!(
        parse_uiautomator_dump(""),
        Err(UiDumpError::NoXml {
            output: String::new()
        })
    );
    // Field bug 39: the status line alone (AOSP's typo, or spelled right; an OEM build that
    // also prints the failed open of the tty) is its own kind, not a parse error.
    for only in [
        "UI hierchary dumped to: /dev/tty\n",
        "UI hierarchy dumped to: /dev/tty\r\n",
        "java.io.FileNotFoundException: /dev/tty: open failed: ENXIO (No such device or address)\n\tat libcore.io.IoBridge.open(IoBridge.java:574)\nUI hierchary dumped to: /dev/tty\n",
    ] {
        assert_eq!(
            parse_uiautomator_dump(only),
            Err(UiDumpError::StatusOnly {
                path: "/dev/tty".into()
            }),
            "{only:?}"
        );
    }
    assert!(matches!(
        parse_uiautomator_dump(
            "ERROR: could not get idle state.\nUI hierchary dumped to: /dev/tty\n"
        ),
        Err(UiDumpError::NotIdle)
    ));
    let empty =
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"/>";
    assert_eq!(parse_uiautomator_dump(empty), Err(UiDumpError::NullRoot));
    assert_eq!(
        parse_uiautomator_dump("<hierarchy rotation=\"0\"></hierarchy>"),
        Err(UiDumpError::NullRoot)
    );
    let raw = fixture!("uiautomator/emulator-gmail-alert-dialog.xml");
    assert!(matches!(
        parse_uiautomator_dump(&raw[..raw.len() / 2]),
        Err(UiDumpError::Xml(_))
    ));
    let bad = "<hierarchy><node text=\"a></node></hierarchy>";
    assert!(matches!(
        parse_uiautomator_dump(bad),
        Err(UiDumpError::Xml(_))
    ));
    assert_eq!(
        UiDumpError::NotIdle.to_string(),
        "uiautomator could not get idle state"
    );
}

#[test]
fn entities_surrogates_and_bounds_edge_cases() {
    let xml = "<hierarchy rotation=\"3\"><node text=\"&#55357;&#56832;&lt;&amp;&#x41;&#10;&bogus;&#55357;x\" \
               hint=\"Search\" bounds=\"[-10,5][20,-3]\" display-id=\"2\"><node bounds=\"junk\"/></node></hierarchy>";
    let dump = parse(xml);
    assert_eq!(dump.rotation, 3);
    assert_eq!(dump.nodes[0].text, "\u{1F600}<&A\n&bogus;\u{FFFD}x");
    assert_eq!(
        (dump.nodes[0].hint.as_str(), dump.nodes[0].display_id),
        ("Search", Some(2))
    );
    let b = dump.nodes[0].bounds;
    assert_eq!(
        (b.left, b.top, b.width(), b.height(), b.is_empty()),
        (-10, 5, 30, 0, true)
    );
    assert_eq!(
        (dump.nodes[1].index_path.as_str(), dump.nodes[1].bounds),
        ("0/0", Bounds::default())
    );
    assert_eq!(
        Bounds::parse("[0,0][1080,2400]").map(|b| b.center()),
        Some((540, 1200))
    );
    assert_eq!(Bounds::parse("[1,2][3]"), None);
}

/// Field bug 66: the dumper's XML writer refuses a character of the screen's text
/// (openatx/uiautomator2#135); another crash of the dumper is a transient one.
#[test]
fn the_writers_refusal_of_a_character_is_unwritable_text() {
    let trace = fixture!("uiautomator/wechat-dump-illegal-character-d83d-kxmlserializer.txt");
    match parse_uiautomator_dump(trace) {
        Err(UiDumpError::UnwritableText { character, line }) => {
            assert_eq!(character, Some(0xD83D));
            assert_eq!(
                line,
                "java.lang.IllegalArgumentException: Illegal character (d83d)"
            );
        }
        other => panic!("{other:?}"),
    }
    let newer = "java.lang.IllegalArgumentException: Illegal character (U+0)\n\tat com.android.org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:182)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:173)\n";
    assert!(matches!(
        parse_uiautomator_dump(newer),
        Err(UiDumpError::UnwritableText {
            character: Some(0),
            ..
        })
    ));
    let pair = "java.lang.IllegalArgumentException: Bad surrogate pair (U+d83d U+41)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeSurrogate(KXmlSerializer.java:190)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:170)\n";
    assert!(matches!(
        parse_uiautomator_dump(pair),
        Err(UiDumpError::UnwritableText {
            character: Some(0xD83D),
            ..
        })
    ));
    let npe = "java.lang.NullPointerException\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.childNafCheck(AccessibilityNodeInfoDumper.java:200)\n";
    assert!(matches!(
        parse_uiautomator_dump(npe),
        Err(UiDumpError::DumperCrashed { .. })
    ));
    // A trace elsewhere stays an unexplained answer.
    let other = "java.lang.IllegalArgumentException: Illegal character (d83d)\n\tat com.example.Foo.bar(Foo.java:1)\n";
    assert!(matches!(
        parse_uiautomator_dump(other),
        Err(UiDumpError::NoXml { .. })
    ));
}
