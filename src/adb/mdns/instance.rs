//! DNS-SD instance names as phones announce them. A phone's `_adb-tls-connect._tcp` instance is
//! its GUID (`adb-<serial>-<6 alnum>`). When that name is taken on the link — the phone's own
//! earlier record still cached, a re-registration racing its withdrawal, two responders — the
//! responder renames the service `<name> (2)`, `<name> (3)`…: RFC 6762 §9 (conflict
//! resolution), RFC 6763 Appendix D; Android's responder does it in
//! `MdnsAdvertiser.Registration.getUpdatedServiceName` (Connectivity module), truncating the
//! name so name and suffix fit one 63-byte label, "matching legacy behavior based on
//! mdnsresponder". Avahi's form is `<name> #2` (`avahi_alternative_service_name`). adb itself
//! matches known hosts by prefix for this reason (AOSP `client/adb_wifi.cpp` `IsKnownHost`;
//! b/432299214, b/421363980: some builds register the new instance before removing the old).

/// Longest DNS label (RFC 1035 §2.3.4): an instance name with its conflict suffix fits in it.
const MAX_LABEL: usize = 63;

/// The instance label of `fullname` (`<instance>.<service_type>`, as mdns-sd reports it), with
/// the RFC 6763 §4.3 escapes (`\.`, `\\`) undone; `None` when `fullname` is not of
/// `service_type` (compared ASCII-case-insensitively, as DNS names are).
pub fn instance_of(fullname: &str, service_type: &str) -> Option<String> {
    let split = fullname.len().checked_sub(service_type.len() + 1)?;
    let (head, tail) = (fullname.get(..split)?, fullname.get(split..)?);
    let tail = tail.strip_prefix('.')?;
    if !tail.eq_ignore_ascii_case(service_type) || head.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(head.len());
    let mut chars = head.chars();
    while let Some(c) = chars.next() {
        // `\x` stands for `x` (a dot or a backslash in the label).
        let c = if c == '\\' {
            chars.next().unwrap_or(c)
        } else {
            c
        };
        out.push(c);
    }
    Some(out)
}

/// `found` without a conflict suffix (` (N)` or ` #N`, N decimal) and the suffix's length in
/// bytes; `None` when it has none.
fn without_conflict_suffix(found: &str) -> Option<(&str, usize)> {
    let digits_ok =
        |d: &str| !d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit());
    if let Some(inner) = found.strip_suffix(')') {
        let (base, n) = inner.rsplit_once(" (")?;
        return digits_ok(n).then_some((base, n.len() + 3));
    }
    let (base, n) = found.rsplit_once(" #")?;
    digits_ok(n).then_some((base, n.len() + 2))
}

/// Whether the announced instance `found` is `wanted`: the same name (ASCII-case-insensitively),
/// or `wanted` renamed after a name conflict — `wanted (N)` / `wanted #N`, `wanted` cut short
/// where name and suffix would not fit one label (see the module). Never a prefix match beyond
/// that: `adb-X-abc123` does not name `adb-X-abc`.
pub fn names_instance(found: &str, wanted: &str) -> bool {
    if found.eq_ignore_ascii_case(wanted) {
        return true;
    }
    let Some((base, suffix)) = without_conflict_suffix(found) else {
        return false;
    };
    if base.eq_ignore_ascii_case(wanted) {
        return true;
    }
    // Truncated to fit: only when the whole name would not have (a UTF-8 cut may be up to 3
    // bytes shorter than the room left).
    !base.is_empty()
        && wanted.len() + suffix > MAX_LABEL
        && base.len() + suffix + 3 >= MAX_LABEL
        && wanted
            .get(..base.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONNECT: &str = "_adb-tls-connect._tcp.local.";

    #[test]
    fn the_instance_is_read_off_the_full_name_with_escapes_undone() {
        let i = instance_of("adb-R58N-abc123._adb-tls-connect._tcp.local.", CONNECT);
        assert_eq!(i.as_deref(), Some("adb-R58N-abc123"));
        let i = instance_of("adb-R58N-abc123 (2)._ADB-TLS-CONNECT._tcp.local.", CONNECT);
        assert_eq!(i.as_deref(), Some("adb-R58N-abc123 (2)"));
        let i = instance_of(r"my\.phone\\x._adb-tls-connect._tcp.local.", CONNECT);
        assert_eq!(i.as_deref(), Some(r"my.phone\x"));
        assert_eq!(instance_of("x._adb-tls-pairing._tcp.local.", CONNECT), None);
        assert_eq!(instance_of("._adb-tls-connect._tcp.local.", CONNECT), None);
        assert_eq!(instance_of("short", CONNECT), None);
    }

    #[test]
    fn conflict_renames_name_the_instance_and_nothing_else_does() {
        let guid = "adb-R58N12ABCDEF-Xy9QzT";
        for found in [
            guid,
            "ADB-r58n12abcdef-xY9qZt",
            "adb-R58N12ABCDEF-Xy9QzT (2)",
            "adb-R58N12ABCDEF-Xy9QzT (3)",
            "adb-R58N12ABCDEF-Xy9QzT (17)",
            "adb-R58N12ABCDEF-Xy9QzT #2",
        ] {
            assert!(names_instance(found, guid), "{found}");
        }
        for found in [
            "adb-R58N12ABCDEF-Xy9QzT2",
            "adb-R58N12ABCDEF-Xy9Qz",
            "adb-R58N12ABCDEF-Xy9Qz (2)",
            "adb-R58N12ABCDEF-Xy9QzT (x)",
            "adb-R58N12ABCDEF-Xy9QzT ()",
            "adb-R58N12ABCDEF-Xy9QzT(2)",
            "adb-R58N12ABCDEF-Xy9QzT (2) (2)x",
            "adb-OTHER-Xy9QzT (2)",
            "",
        ] {
            assert!(!names_instance(found, guid), "{found}");
        }
    }

    #[test]
    fn a_name_too_long_for_its_suffix_is_matched_cut_short() {
        // 62 bytes: with " (2)" it would not fit one label, so Android cuts it to 59.
        let guid = format!("adb-{}-abcdef", "S".repeat(51));
        assert_eq!(guid.len(), 62);
        let cut = format!("{} (2)", &guid[..59]);
        assert!(names_instance(&cut, &guid));
        // A short name is never matched by a prefix of itself.
        assert!(!names_instance("adb-SS (2)", "adb-SS-abcdef"));
    }
}
