//! The sim's shell and programs in-process: quoting, operators, redirections, variables,
//! the command log (proof that an injected second command never ran), and the phone's
//! reactions to `input`.

use xagent_adb_sim::persona::Persona;
use xagent_adb_sim::sh::{Fd, Shell, Stdin};
use xagent_adb_sim::Phone;

fn phone() -> Phone {
    Phone::new(Persona::load("pixel-android14").unwrap(), "SIMT", "Pixel 8")
}

/// Runs a command line; returns (stdout, stderr, status).
async fn sh(phone: &Phone, line: &str) -> (String, String, i32) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut shell = Shell::new(phone.clone(), tx, Stdin::Empty);
    let code = shell.run_line(line).await;
    drop(shell);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    while let Some((fd, bytes)) = rx.recv().await {
        match fd {
            Fd::Out => out.extend(bytes),
            Fd::Err => err.extend(bytes),
        }
    }
    (
        String::from_utf8_lossy(&out).into(),
        String::from_utf8_lossy(&err).into(),
        code,
    )
}

fn ran(phone: &Phone, program: &str) -> bool {
    phone
        .command_log()
        .iter()
        .any(|e| e.argv.first().map(String::as_str) == Some(program))
}

#[tokio::test]
async fn single_quotes_keep_injection_in_one_argument() {
    let p = phone();
    assert_eq!(sh(&p, "echo 'a;reboot'").await.0, "a;reboot\n");
    assert!(!ran(&p, "reboot"));
    let log = p.command_log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].argv, ["echo", "a;reboot"]);
    // Unquoted, `;` runs a second command (one the phone lacks: `reboot` would reboot it).
    let (_, err, code) = sh(&p, "echo a;pwned").await;
    assert!(ran(&p, "pwned"));
    assert_eq!(err, "/system/bin/sh: pwned: inaccessible or not found\n");
    assert_eq!(code, 127);
}

#[tokio::test]
async fn double_quotes_backslashes_and_variables() {
    let p = phone();
    let (out, _, _) = sh(&p, r#"A=1; echo "x \"y\" \$HOME $A" a\ b '$A' "#).await;
    assert_eq!(out, "x \"y\" $HOME 1 a b $A\n");
    assert_eq!(sh(&p, "echo a$UNSET_VAR").await.0, "a\n");
    assert_eq!(sh(&p, "false; echo $?; true; echo $?").await.0, "1\n0\n");
    let (out, _, _) = sh(&p, "echo x`echo id`y $(echo a b)").await;
    assert_eq!(out, "xidy a b\n");
    assert!(ran(&p, "echo"));
}

#[tokio::test]
async fn and_or_pipes_and_exit() {
    let p = phone();
    assert_eq!(sh(&p, "false && echo no || echo yes").await.0, "yes\n");
    assert_eq!(
        sh(&p, "true && echo one; false || echo two").await.0,
        "one\ntwo\n"
    );
    assert_eq!(
        sh(&p, "getprop | grep ro.product.model").await.0,
        "[ro.product.model]: [Pixel 8]\n"
    );
    assert_eq!(sh(&p, "printf 'a\\nb\\nc\\n' | tail -n 1").await.0, "c\n");
    assert_eq!(
        sh(&p, "printf 'a\\nb\\nc\\n' | head -n 2").await.0,
        "a\nb\n"
    );
    let (out, _, code) = sh(&p, "echo before; exit 7; echo after").await;
    assert_eq!((out.as_str(), code), ("before\n", 7));
}

#[tokio::test]
async fn redirections_to_files_and_dev_null() {
    let p = phone();
    let (out, err, code) = sh(
        &p,
        "echo hi > /sdcard/x.txt; echo more >> /sdcard/x.txt; cat /sdcard/x.txt",
    )
    .await;
    assert_eq!((out.as_str(), err.as_str(), code), ("hi\nmore\n", "", 0));
    let (out, err, _) = sh(&p, "ls /nope 2>/dev/null; echo $?").await;
    assert_eq!((out.as_str(), err.as_str()), ("1\n", ""));
    let (out, err, _) = sh(&p, "ls /nope 2>&1 | grep -c 'No such file'").await;
    assert_eq!((out.as_str(), err.as_str()), ("1\n", ""));
    let (out, err, _) = sh(&p, "cat /nope > /dev/null 2>&1; echo rc=$?").await;
    assert_eq!((out.as_str(), err.as_str()), ("rc=1\n", ""));
    let (_, err, code) = sh(&p, "echo x > /missing/dir/f").await;
    assert_eq!(
        (err.as_str(), code),
        (
            "/system/bin/sh: can't create /missing/dir/f: No such file or directory\n",
            1
        )
    );
}

#[tokio::test]
async fn syntax_errors_run_nothing() {
    let p = phone();
    let (_, err, code) = sh(&p, "echo 'unterminated; reboot").await;
    assert_eq!(
        (err.as_str(), code),
        ("/system/bin/sh: no closing quote\n", 1)
    );
    let (_, err, _) = sh(&p, "echo a |").await;
    assert!(err.starts_with("/system/bin/sh: syntax error"), "{err}");
    assert!(p.command_log().is_empty());
}

#[tokio::test]
async fn sleep_is_cancellable() {
    let p = phone();
    let started = std::time::Instant::now();
    let r = tokio::time::timeout(
        std::time::Duration::from_millis(100),
        sh(&p, "sleep 30; echo done"),
    )
    .await;
    assert!(r.is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[tokio::test]
async fn input_text_rules_of_android() {
    let p = phone();
    p.with(|s| {
        s.launch("com.example.notes", ".MainActivity");
        s.ui.focused = Some("com.example.notes:id/note_text".into());
    });
    sh(&p, "input text 'Some%sText'").await;
    sh(&p, "input text 'a$a'").await;
    sh(&p, "input text a$a").await;
    let (_, err, code) = sh(&p, "input text 'שלום!'").await;
    assert_eq!(code, 255);
    assert!(
        err.starts_with(
            "Exception occurred while executing 'text':\njava.lang.NullPointerException"
        ),
        "{err}"
    );
    sh(&p, "input keyevent KEYCODE_DEL; input keyevent 66").await;
    assert_eq!(p.with(|s| s.ui.note_text.clone()), "Some Texta$a\n");
    sh(&p, "input keyevent 4; input keyevent KEYCODE_BACK").await;
    assert_eq!(
        p.with(|s| s.foreground().0),
        "com.google.android.apps.nexuslauncher"
    );
}

#[tokio::test]
async fn observation_formats() {
    let p = phone();
    assert_eq!(sh(&p, "wm size").await.0, "Physical size: 1080x2400\n");
    sh(&p, "wm size 540x1200").await;
    assert_eq!(
        sh(&p, "wm size").await.0,
        "Physical size: 1080x2400\nOverride size: 540x1200\n"
    );
    assert_eq!(sh(&p, "wm density").await.0, "Physical density: 420\n");
    let battery = sh(&p, "dumpsys battery").await.0;
    assert!(
        battery.contains("\n  level: 80\n  scale: 100\n") && battery.contains("Capacity level: 3"),
        "{battery}"
    );
    assert!(sh(&p, "dumpsys power")
        .await
        .0
        .contains("mWakefulness=Awake"));
    sh(
        &p,
        "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1",
    )
    .await;
    let act = sh(&p, "dumpsys activity activities").await.0;
    assert!(
        act.contains("mResumedActivity: ActivityRecord{")
            && act.contains("com.android.settings/.Settings t"),
        "{act}"
    );
    let (_, err, code) = sh(
        &p,
        "monkey -p com.nope -c android.intent.category.LAUNCHER 1",
    )
    .await;
    assert!(err.ends_with("\n** No activities found to run, monkey aborted.\n"));
    assert!(err.starts_with(
        "args: [-p, com.nope, -c, android.intent.category.LAUNCHER, 1]\n arg: \"-p\"\n"
    ));
    assert_eq!(code, 252);
    let resolved = sh(&p, "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.example.notes").await.0;
    assert!(
        resolved.ends_with("\ncom.example.notes/.MainActivity\n"),
        "{resolved}"
    );
    assert_eq!(
        sh(
            &p,
            "settings put global foo bar; settings get global foo; settings get secure nope"
        )
        .await
        .0,
        "bar\nnull\n"
    );
}

/// Decodes a PNG into (width, height, rgba).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height, buf)
}

#[tokio::test]
async fn screenshot_agrees_with_ui_dump() {
    let p = phone();
    let xml = sh(&p, "uiautomator dump /dev/tty").await.0;
    let node = xml
        .split("<node ")
        .find(|n| n.contains("text=\"Notes\""))
        .unwrap();
    let bounds: Vec<u32> = node
        .split("bounds=\"")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap())
        .collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut shell = Shell::new(p.clone(), tx, Stdin::Empty);
    shell
        .run_line("screencap -p /sdcard/s.png; cat /sdcard/s.png")
        .await;
    drop(shell);
    let mut png_bytes = Vec::new();
    while let Some((Fd::Out, b)) = rx.recv().await {
        png_bytes.extend(b);
    }
    if std::env::var_os("SIM_SAVE_PNG").is_some() {
        std::fs::write("/tmp/sim-launcher.png", &png_bytes).unwrap();
    }
    let (w, h, rgba) = decode_png(&png_bytes);
    assert_eq!((w, h), (1080, 2400));
    let px =
        |x: u32, y: u32| rgba[((y * w + x) * 4) as usize..((y * w + x) * 4 + 3) as usize].to_vec();
    assert_eq!(
        px(bounds[0] + 4, bounds[1] + 4),
        vec![0xf9, 0xc7, 0x4f],
        "Notes icon colour under its bounds"
    );
    assert_ne!(px(bounds[0] + 4, bounds[1] - 4), vec![0xf9, 0xc7, 0x4f]);
}

#[tokio::test]
async fn leanback_only_app_and_unknown_package_differ() {
    let p = phone();
    let launcher =
        "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.example.tv";
    assert_eq!(sh(&p, launcher).await.0, "No activity found\n");
    let leanback = "cmd package resolve-activity --brief -c android.intent.category.LEANBACK_LAUNCHER com.example.tv";
    assert!(sh(&p, leanback)
        .await
        .0
        .ends_with("\ncom.example.tv/.TvMainActivity\n"));
    assert!(sh(&p, "pm list packages com.example.tv")
        .await
        .0
        .contains("package:com.example.tv\n"));
    assert_eq!(sh(&p, "pm list packages com.nope").await.0, "");
    let (_, _, code) = sh(
        &p,
        "monkey -p com.example.tv -c android.intent.category.LAUNCHER 1",
    )
    .await;
    assert_eq!(code, 252);
    let (out, _, code) = sh(&p, "am start -n com.example.tv/.TvMainActivity").await;
    assert_eq!(
        (out.as_str(), code),
        (
            "Starting: Intent { cmp=com.example.tv/.TvMainActivity }\n",
            0
        )
    );
    assert_eq!(p.with(|s| s.foreground().0), "com.example.tv");
}

#[tokio::test]
async fn adb_keyboard_broadcast_types_unicode_only_when_selected() {
    let p = phone();
    p.with(|s| {
        s.launch("com.example.notes", ".MainActivity");
        s.ui.focused = Some("com.example.notes:id/note_text".into());
    });
    // "中文'输入\"test" as base64.
    let b64 = "5Lit5paHJ+i+k+WFpSJ0ZXN0";
    let cmd = format!("am broadcast -a ADB_INPUT_B64 --es msg {b64}");
    let (out, _, _) = sh(&p, &cmd).await;
    assert!(out.ends_with("Broadcast completed: result=0\n"), "{out}");
    assert_eq!(
        p.with(|s| s.ui.note_text.clone()),
        "",
        "no receiver without ADBKeyBoard"
    );
    p.with(|s| s.adb_keyboard = true);
    let (out, _, _) = sh(&p, "ime set com.android.adbkeyboard/.AdbIME").await;
    assert_eq!(
        out,
        "Input method com.android.adbkeyboard/.AdbIME selected for user #0\n"
    );
    sh(&p, &cmd).await;
    assert_eq!(p.with(|s| s.ui.note_text.clone()), "中文'输入\"test");
    let xml = sh(&p, "uiautomator dump /dev/tty").await.0;
    assert!(xml.contains("text=\"中文'输入&quot;test\""), "{xml}");
}

/// `cmd clipboard` reaches a service with no shell command (Binder's default answer, exit 0);
/// an unknown service is `Can't find service` (exit 20); Android 6 has no `cmd` at all.
#[tokio::test]
async fn cmd_clipboard_is_a_service_without_a_shell_command() {
    let p = phone();
    let (out, err, code) = sh(&p, "cmd clipboard get-primary-clip").await;
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("", "No shell command implementation.\n", 0)
    );
    let (_, err, code) = sh(&p, "cmd nosuchservice list").await;
    assert_eq!(code, 20);
    assert!(err.contains("Can't find service: nosuchservice"), "{err}");
    let legacy = Phone::new(Persona::load("legacy-android6").unwrap(), "SIML", "Nexus 5");
    let (_, err, code) = sh(&legacy, "cmd clipboard get-primary-clip").await;
    assert_eq!(code, 127, "{err}");
}

/// mksh's word-start rules the device shell applies to unquoted text (field bug 67,
/// mobile-next/mobile-mcp#447): `#` opens a comment, a leading `~`/`~/` is `$HOME` (`/`);
/// mid-word, quoted, or `~user` they stay.
#[tokio::test]
async fn word_start_hash_and_tilde_as_mksh_reads_them() {
    let p = phone();
    assert_eq!(sh(&p, "echo a #general").await.0, "a\n");
    assert_eq!(
        sh(&p, "echo ~/shared/notes ~").await.0,
        "//shared/notes /\n"
    );
    assert_eq!(
        sh(&p, "echo a~/x hashtag\\ #travel '~/q' \"~\" ~root/x")
            .await
            .0,
        "a~/x hashtag #travel ~/q ~ ~root/x\n"
    );
}
