//! System properties and settings defaults derived from a persona. The key set follows the real
//! `getprop` captures in `fixtures/getprop/*.txt` (e.g. `motorola-edge20-berlin-android13.txt`).

use std::collections::BTreeMap;

use crate::persona::Persona;

/// `(namespace, key, value)` settings a fresh phone has (`settings get`).
/// Source: `fixtures/other/redmi-9-power-settings-list-*.txt`, `samsung-s24-settings-get-navigation-mode.txt`.
pub const DEFAULT_SETTINGS: &[(&str, &str, &str)] = &[
    ("global", "adb_enabled", "1"),
    ("global", "airplane_mode_on", "0"),
    ("global", "development_settings_enabled", "1"),
    ("global", "stay_on_while_plugged_in", "0"),
    ("global", "window_animation_scale", "1.0"),
    ("global", "transition_animation_scale", "1.0"),
    ("global", "animator_duration_scale", "1.0"),
    (
        "secure",
        "default_input_method",
        "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
    ),
    (
        "secure",
        "enabled_input_methods",
        "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
    ),
    ("secure", "navigation_mode", "2"),
    ("system", "screen_brightness", "128"),
    ("system", "screen_off_timeout", "60000"),
    ("system", "accelerometer_rotation", "0"),
    ("system", "user_rotation", "0"),
];

/// A fresh Android ID (`settings get secure android_id`): 64 random bits as 16 lowercase hex
/// digits, different on every phone, chosen once (AOSP `SettingsProvider.java`,
/// `generateSsaid`: 64 bits of an HMAC-SHA256 keyed by a random per-user key; before
/// Android 8 `ensureAndroidIdIsSet`, a `SecureRandom` long). Two phones that share a serial
/// (field bug 50) differ in it.
pub fn fresh_android_id() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 8];
    // The system RNG fails only without /dev/urandom; a clock-derived value then still differs.
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = now.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// All properties of a phone; `serial` and `model` come from the sim options.
pub fn build(p: &Persona, serial: &str, model: &str) -> BTreeMap<String, String> {
    let d = &p.displays[0];
    let pairs: Vec<(&str, String)> = vec![
        ("ro.serialno", serial.into()),
        ("ro.boot.serialno", serial.into()),
        ("ro.product.model", model.into()),
        ("ro.product.manufacturer", p.manufacturer.clone()),
        ("ro.product.brand", p.brand.clone()),
        ("ro.product.name", p.product.clone()),
        ("ro.product.device", p.device.clone()),
        ("ro.product.board", p.device.clone()),
        ("ro.product.cpu.abi", "arm64-v8a".into()),
        (
            "ro.product.cpu.abilist",
            "arm64-v8a,armeabi-v7a,armeabi".into(),
        ),
        ("ro.product.locale", "en-US".into()),
        ("ro.hardware", p.device.clone()),
        ("ro.build.version.release", p.release.clone()),
        ("ro.build.version.sdk", p.sdk.to_string()),
        ("ro.build.version.incremental", p.incremental.clone()),
        ("ro.build.version.security_patch", p.security_patch.clone()),
        ("ro.build.id", p.build_id.clone()),
        ("ro.build.display.id", p.build_id.clone()),
        ("ro.build.type", "user".into()),
        ("ro.build.tags", "release-keys".into()),
        ("ro.build.fingerprint", p.fingerprint()),
        ("ro.build.characteristics", "nosdcard".into()),
        ("ro.sf.lcd_density", d.density.to_string()),
        ("ro.debuggable", "0".into()),
        ("ro.secure", "1".into()),
        ("ro.adb.secure", "1".into()),
        ("ro.boot.mode", "normal".into()),
        ("sys.boot_completed", "1".into()),
        ("dev.bootcomplete", "1".into()),
        ("init.svc.adbd", "running".into()),
        ("persist.sys.usb.config", "adb".into()),
        ("persist.sys.timezone", "Europe/Berlin".into()),
        ("persist.sys.locale", "en-US".into()),
        ("gsm.operator.alpha", "Sim Mobile".into()),
        ("net.hostname", format!("android-{}", serial.to_lowercase())),
        ("service.adb.tcp.port", "5555".into()),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
