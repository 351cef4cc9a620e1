//! `adb devices [-l]` and the adb server's `host:devices` / `host:devices-l` payloads.
//!
//! Output shape (AOSP `packages/modules/adb/transport.cpp`, `append_transport`): short form
//! `<serial>\t<state>`; long form `%-22s %s` (serial padded with spaces to 22 columns, then the
//! state) followed by ` usb:<devpath>` (when known), ` product:…`, ` model:…`, ` device:…` and
//! always ` transport_id:<n>` last. The `no permissions` state is a whole sentence with spaces,
//! parentheses and a URL (`UsbNoPermissionsShortHelpText()`); the serial can be
//! `(no serial number)`. The `adb` client adds `List of devices attached` and `* daemon …` lines.
//! Captures: every file under `tests/fixtures/devices/` (field bug 13).

/// Connection state of a transport (AOSP `ConnectionState` / `to_string`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceState {
    /// `device` — online and authorised.
    Device,
    /// `offline` — transport exists but does not answer.
    Offline,
    /// `unauthorized` — the phone has not accepted this host's RSA key.
    Unauthorized,
    /// `no permissions …` — the host user cannot open the USB device; `hint` is adb's text after
    /// `no permissions`, e.g. `(missing udev rules? user is in the plugdev group); see [http://…]`.
    NoPermissions {
        /// adb's explanation, verbatim (may be empty).
        hint: String,
    },
    /// `bootloader` (fastboot).
    Bootloader,
    /// `recovery`.
    Recovery,
    /// `sideload` (recovery's adb sideload mode).
    Sideload,
    /// `authorizing` — the key exchange is in progress.
    Authorizing,
    /// `connecting` — a TCP/IP transport being set up.
    Connecting,
    /// `host`.
    Host,
    /// Anything else (`rescue`, `detached`, vendor text), verbatim.
    Unknown(String),
    /// Not an adb state: the connector's mark for a phone whose adb server stopped answering
    /// (`adb kill-server`, a crash); the phone itself may be fine (kitakkun/JetWhale PR #105,
    /// field bug 34). Cleared when tracking resumes.
    ServerUnavailable,
    /// Not an adb state: the connector's mark for a route that went away — its adb server no
    /// longer lists the phone (unplugged, or a Wi-Fi transport adb dropped), or its direct
    /// address closed or refused the connection. Told apart from [`Self::Offline`] (attached
    /// or connected, but not answering). Shown as `offline`, adb's word, in tables and metrics.
    Gone,
    /// Not an adb state: the connector's mark for a phone it knew under an `adb connect`
    /// serial (`HOST:PORT`, here `addr`) that its adb server no longer lists after a restart
    /// (`adb kill-server` by another tool: the new server forgets every `adb connect`;
    /// amo13/Anarchy-Droid#6, field bug 51). The connector asks the server to connect it
    /// again (`host:connect`, bounded back-off): `attempt` of `of` so far, `last` the server's
    /// last answer (empty before one), `gave_up` once every attempt failed. Shown as
    /// `offline`.
    ServerForgot {
        /// `HOST:PORT` connected again.
        addr: String,
        /// Attempts made so far (1-based).
        attempt: u32,
        /// Attempts allowed.
        of: u32,
        /// The adb server's last answer to `host:connect` (`failed to connect to …`).
        last: String,
        /// Every attempt failed: the operator must act.
        gave_up: bool,
    },
}

/// How the connector reaches a phone: what a fix may tell the user to do (no `adb` command
/// for a phone the connector dials itself, no cable for a Wi-Fi phone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    /// USB, through an adb server.
    UsbAdbServer,
    /// TCP/IP (`adb connect HOST:PORT`, `adb tcpip`) or wireless debugging (mDNS names
    /// `adb-SERIAL-ID._adb-tls-connect._tcp`), through an adb server.
    WifiAdbServer,
    /// An emulator (`emulator-PORT`), through an adb server.
    Emulator,
    /// The connector's own direct transport (`--device tcp:HOST:PORT`): no adb server involved.
    Direct,
    /// The connector's own direct transport to a phone it paired over Wi-Fi (flows
    /// `adb_pair_code`, `adb_qr_pair`, or `pair`; Android 11+ wireless debugging): no adb
    /// server, no `adb tcpip`; the fix is on the phone's Wireless debugging screen.
    WifiPaired,
}

impl RouteKind {
    /// The kind of a route through `adb_server` (`None`: direct) with adb serial `transport`;
    /// a direct route is [`RouteKind::Direct`] (the caller knows whether it is
    /// [`RouteKind::WifiPaired`]).
    /// adb names network transports `HOST:PORT` (AOSP `client/adb_client.cpp`
    /// `adb_connect`/`socket_spec.cpp`) or by their mDNS service instance
    /// (`client/transport_mdns.cpp`), emulators `emulator-PORT` (`transport_local.cpp`); any
    /// other serial is a USB device's `iSerial`.
    pub fn of(adb_server: Option<&str>, transport: &str) -> RouteKind {
        if adb_server.is_none() {
            return RouteKind::Direct;
        }
        let host_port = transport
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if host_port || transport.contains("._adb-tls-connect.") {
            RouteKind::WifiAdbServer
        } else if transport
            .strip_prefix("emulator-")
            .is_some_and(|p| p.parse::<u16>().is_ok())
        {
            RouteKind::Emulator
        } else {
            RouteKind::UsbAdbServer
        }
    }
}

impl DeviceState {
    /// Parses a state word as adb prints it (the `no permissions …` sentence included).
    pub fn from_adb(state: &str) -> Self {
        let state = state.trim();
        if let Some(rest) = state.strip_prefix("no permissions") {
            return Self::NoPermissions {
                hint: rest.trim().to_string(),
            };
        }
        match state {
            "device" => Self::Device,
            "offline" => Self::Offline,
            "unauthorized" => Self::Unauthorized,
            "bootloader" => Self::Bootloader,
            "recovery" => Self::Recovery,
            "sideload" => Self::Sideload,
            "authorizing" => Self::Authorizing,
            "connecting" => Self::Connecting,
            "host" => Self::Host,
            other => Self::Unknown(other.to_string()),
        }
    }

    /// The state as adb names it (`no permissions` without the hint; [`Self::Gone`] is
    /// `offline`).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Device => "device",
            Self::Offline | Self::Gone | Self::ServerForgot { .. } => "offline",
            Self::Unauthorized => "unauthorized",
            Self::NoPermissions { .. } => "no permissions",
            Self::Bootloader => "bootloader",
            Self::Recovery => "recovery",
            Self::Sideload => "sideload",
            Self::Authorizing => "authorizing",
            Self::Connecting => "connecting",
            Self::Host => "host",
            Self::Unknown(s) => s,
            Self::ServerUnavailable => "adb server unavailable",
        }
    }

    /// What the state means for a phone reached through `route`, in a user's words.
    pub fn meaning(&self, route: RouteKind) -> String {
        use RouteKind::*;
        match (self, route) {
            (Self::Gone, UsbAdbServer) => {
                "the phone is unplugged: the adb server no longer lists it".into()
            }
            (Self::Gone, WifiAdbServer) => {
                "the phone left: the adb server no longer lists its Wi-Fi connection".into()
            }
            (Self::Gone, Emulator) => {
                "the emulator stopped: the adb server no longer lists it".into()
            }
            (Self::Gone, Direct) => {
                "the phone is not reachable: its address closed or refused the connection".into()
            }
            (Self::Gone, WifiPaired) => {
                "the phone does not answer at its last Wi-Fi address (wireless debugging off, or \
                 the phone left the network)"
                    .into()
            }
            (
                Self::ServerForgot {
                    addr,
                    attempt,
                    of,
                    last,
                    gave_up,
                },
                _,
            ) => {
                let forgot = format!(
                    "the adb server was restarted and no longer lists the phone's `adb connect` \
                     connection ({addr})"
                );
                let last = if last.is_empty() {
                    String::new()
                } else {
                    format!(", last answer: {}", last.trim())
                };
                if *gave_up {
                    format!(
                        "{forgot}; the connector asked it to connect {addr} again {of} times and \
                         every attempt failed{last}"
                    )
                } else {
                    format!(
                        "{forgot}; the connector is asking it to connect {addr} again (attempt \
                         {attempt} of {of}{last})"
                    )
                }
            }
            (Self::Offline, Direct | WifiPaired) => {
                "the phone is connected but does not answer (adbd or the network hangs)".into()
            }
            (Self::Offline, _) => {
                "the phone is attached but does not answer (adb state: offline)".into()
            }
            (other, _) => format!(
                "the phone is attached but not online (adb state: {})",
                other.as_str()
            ),
        }
    }

    /// What to tell the user to make the phone usable, for a phone reached through `route`;
    /// `None` for a usable `device`. No `adb` command for a direct phone, no cable for a Wi-Fi
    /// one. Sources: adb's own hints (AOSP `transport.cpp`, `UsbNoPermissionsShortHelpText`),
    /// Android's "Run apps on a hardware device" and "Wireless debugging" guides.
    pub fn remedy(&self, route: RouteKind) -> Option<&'static str> {
        use RouteKind::*;
        Some(match (self, route) {
            (Self::Device | Self::Host, _) => return None,
            (Self::Gone, UsbAdbServer) => {
                "plug the USB cable back in (try another cable or port if it stays away); the \
                 connector picks the phone up again by itself"
            }
            (Self::Gone, WifiAdbServer) => {
                "make sure the phone is on the same network with Developer options → Wireless \
                 debugging on (it turns off after a reboot or a network change), then \
                 `adb connect HOST:PORT` again on the box"
            }
            (Self::Gone, Emulator) => "start the emulator again",
            (Self::Gone, Direct) => {
                "make sure the phone is on and on the network, and that it still listens (wireless \
                 debugging on; a phone on TCP/IP debugging forgets it when it reboots: \
                 `adb tcpip 5555` again from a computer it is plugged into); the connector dials \
                 it again every second and resumes by itself"
            }
            // One text with `check` (a paired phone's survey reads `offline`). Only the fix:
            // a refusal puts `meaning` before it, which already says the phone is silent.
            (Self::Gone | Self::Offline, WifiPaired) => {
                "on the phone turn Developer options → Wireless debugging on (same network as \
                 this box); a running connector finds its new address by mDNS"
            }
            (Self::Offline, UsbAdbServer) => {
                "replug the USB cable or run `adb reconnect` on the box; if it stays offline, \
                 toggle USB debugging off and on in Developer options"
            }
            (Self::Offline, WifiAdbServer) => {
                "run `adb reconnect` on the box; if it stays offline, toggle Developer options → \
                 Wireless debugging off and on (or the phone's Wi-Fi), then `adb disconnect \
                 HOST:PORT` and `adb connect HOST:PORT` again"
            }
            (Self::Offline, Emulator) => "restart the emulator (cold boot)",
            (Self::Offline, Direct) => {
                "the connector drops the silent connection and dials again by itself; if the \
                 phone stays silent, toggle wireless debugging off and on (or its Wi-Fi), or \
                 reboot it"
            }
            (Self::Unauthorized, UsbAdbServer) => {
                "unlock the phone and accept the \"Allow USB debugging?\" RSA fingerprint prompt \
                 (tick \"Always allow\"); if no prompt shows, revoke USB debugging authorisations \
                 in Developer options and replug"
            }
            // Android revokes wireless-debugging keys on "Revoke USB debugging authorisations"
            // and after 7 days unused unless "Disable adb authorization timeout" is on.
            (Self::Unauthorized, WifiPaired) => {
                "the phone no longer accepts this connector's key (pairing revoked, or forgotten \
                 after 7 days unused): pair it again (flow adb_pair_code or adb_qr_pair, or \
                 `xagent-adb-connector pair`)"
            }
            // Some devices show no prompt for a network connection at all (field bug 80:
            // dwaan/homebridge-adb#71, an NVIDIA Shield on Android TV 11; RushB-fr/freekiosk#268,
            // a device in lock task mode).
            (Self::Unauthorized, _) => {
                "unlock the phone and accept the \"Allow USB debugging?\" RSA key prompt (Android \
                 shows it for network connections too; tick \"Always allow\"); a phone on \
                 wireless debugging (Android 11+) needs pairing again (Developer options → \
                 Wireless debugging → Pair device). No prompt on the screen? Android TV builds \
                 show none for a network connection until Developer options → Network debugging \
                 is switched off and on (revoke the debugging authorisations there first; the \
                 prompt then shows on the TV), and a device in kiosk (lock task) mode cannot show \
                 it until kiosk mode ends; or authorise this box once over USB"
            }
            (Self::NoPermissions { .. }, _) => {
                "the adb server's user may not open the USB device: install the udev rule \
                 /usr/lib/udev/rules.d/60-xagent-adb-connector.rules (shipped in the .deb; \
                 README \"USB permissions\"; without the package: a rule giving ADB interfaces \
                 MODE=\"0660\" and a group the adb server runs in, e.g. plugdev), reload udev \
                 and replug"
            }
            (Self::Authorizing, _) => {
                "wait a moment and accept the RSA prompt on the phone if it appears"
            }
            (Self::Connecting, Direct | WifiPaired) => "wait for the connection to finish",
            (Self::Connecting, _) => {
                "wait for the connection to finish; if it stays, `adb disconnect` and connect again"
            }
            (Self::Bootloader, _) => {
                "the phone is in the bootloader (fastboot): reboot it to Android"
            }
            (Self::Recovery | Self::Sideload, _) => {
                "the phone is in recovery: reboot it to Android"
            }
            (Self::Unknown(_), Direct | WifiPaired) => {
                "reboot the phone; the connector dials it again by itself"
            }
            (Self::Unknown(_), WifiAdbServer) => {
                "unknown adb state: `adb disconnect HOST:PORT` and connect again, or restart the \
                 adb server"
            }
            (Self::Unknown(_), _) => {
                "unknown adb state: replug the phone or restart the adb server"
            }
            (Self::ServerUnavailable, _) => {
                "the adb server on this host is not running or not answering: start it \
                 (`adb start-server`); the connector picks the phone up again by itself"
            }
            (Self::ServerForgot { gave_up: false, .. }, _) => {
                "wait a few seconds: the channel comes back by itself once the phone answers"
            }
            (Self::ServerForgot { gave_up: true, .. }, _) => {
                "make sure the phone is on and on this box's network with adb over TCP/IP or \
                 Wireless debugging on (a reboot turns `adb tcpip` off; Wireless debugging \
                 picks a new port each time it is turned on), then run `adb connect HOST:PORT` \
                 on the box with the address shown; the connector picks the phone up again by \
                 itself"
            }
        })
    }
}

/// One line of `adb devices [-l]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceEntry {
    /// Serial (`emulator-5554`, `192.168.1.5:5555`, `(no serial number)`).
    pub serial: String,
    /// Connection state.
    pub state: DeviceState,
    /// `product:` (long form only).
    pub product: Option<String>,
    /// `model:` (long form only; adb replaces spaces with `_`).
    pub model: Option<String>,
    /// `device:` (long form only).
    pub device: Option<String>,
    /// `transport_id:` (long form only).
    pub transport_id: Option<u64>,
    /// `usb:` devpath (long form, USB only), e.g. `1-1.5` or `1114112X`.
    pub usb: Option<String>,
}

const NO_SERIAL: &str = "(no serial number)";

/// Parses the device list. Blank lines, the `List of devices attached` header, `* daemon …`
/// notices, `adb:`/`error:` messages and lines without a state are skipped; every other line
/// yields an entry, so one odd line never hides the others (field bug 13).
pub fn parse_devices_l(text: &str) -> Vec<DeviceEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(raw: &str) -> Option<DeviceEntry> {
    // Serials are kept byte-exact: a serial may begin with a space (Genymobile/scrcpy PR
    // #6664, field bug 33), so only the line end is cut and the short form is split on its TAB.
    let raw = raw.trim_end_matches(['\r', '\n']);
    let line = raw.trim();
    const NOISE: [&str; 5] = ["List of devices", "* ", "adb:", "error:", "adb server"];
    if line.is_empty() || NOISE.iter().any(|p| line.starts_with(p)) {
        return None;
    }
    let (serial, rest) = match (line.strip_prefix(NO_SERIAL), raw.split_once('\t')) {
        (Some(rest), _) => (NO_SERIAL, rest),
        // The short form separates with a TAB, which no serial contains; prefer it.
        (None, Some((serial, rest))) if !serial.is_empty() => (serial, rest),
        // The long form pads the serial with spaces (`%-22s`), and the serial itself may hold
        // spaces: an mDNS instance renamed after a name conflict, `adb-SERIAL-ID (2)._adb-tls-
        // connect._tcp` (defold/defold#12723; field bug 57).
        _ => split_long_serial(line)?,
    };
    let rest = rest.trim();
    if rest.is_empty() {
        return None;
    }
    // Peel the known `key:value` fields off the end; what remains is the state.
    let mut fields: Vec<&str> = rest.split_whitespace().collect();
    let mut entry = DeviceEntry {
        serial: serial.to_string(),
        state: DeviceState::Unknown(String::new()),
        product: None,
        model: None,
        device: None,
        transport_id: None,
        usb: None,
    };
    while fields.len() > 1 {
        let Some(last) = fields.last() else { break };
        let Some((key, value)) = last.split_once(':') else {
            break;
        };
        match key {
            "usb" => entry.usb = Some(value.to_string()),
            "product" => entry.product = Some(value.to_string()),
            "model" => entry.model = Some(value.to_string()),
            "device" => entry.device = Some(value.to_string()),
            "transport_id" => entry.transport_id = value.parse().ok(),
            _ => break,
        }
        fields.pop();
    }
    entry.state = DeviceState::from_adb(&fields.join(" "));
    Some(entry)
}

/// Splits a long-form line into the serial and the rest (state and `key:value` fields): the
/// state is the one word before the fields (AOSP `ConnectionState` names), or the `no
/// permissions …` sentence; everything before it, padding cut, is the serial, spaces and all.
fn split_long_serial(line: &str) -> Option<(&str, &str)> {
    let mut head = line.trim_end();
    // Peel the `key:value` fields off the end.
    while let Some((before, last)) = head.rsplit_once(char::is_whitespace) {
        let known = last.split_once(':').is_some_and(|(key, _)| {
            ["usb", "product", "model", "device", "transport_id"].contains(&key)
        });
        if !known {
            break;
        }
        head = before.trim_end();
    }
    let at = match head.find(" no permissions") {
        Some(at) => at,
        None => head.rfind(char::is_whitespace)?,
    };
    let serial = head[..at].trim_end();
    if serial.is_empty() {
        return line.split_once(char::is_whitespace);
    }
    Some((serial, &line[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long-form serials with spaces: adb's mDNS transports after a name conflict (` (2)`),
    /// online, offline and without permission (field bug 57: defold/defold#12723).
    #[test]
    fn long_form_serials_with_spaces_keep_their_whole_name() {
        let e = one("adb-13e75597-Upleco (2)._adb-tls-connect._tcp device product:lynx model:Pixel_7a device:lynx transport_id:3\n");
        assert_eq!(e.serial, "adb-13e75597-Upleco (2)._adb-tls-connect._tcp");
        assert_eq!(e.state, DeviceState::Device);
        assert_eq!(e.transport_id, Some(3));
        assert_eq!(e.model.as_deref(), Some("Pixel_7a"));
        let e = one("adb-R58N12ABCDEF-AbCdEf (3)._adb-tls-connect._tcp offline transport_id:9\n");
        assert_eq!(
            e.serial,
            "adb-R58N12ABCDEF-AbCdEf (3)._adb-tls-connect._tcp"
        );
        assert_eq!(e.state, DeviceState::Offline);
        let e = one("my phone (2)           no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:4\n");
        assert_eq!(e.serial, "my phone (2)");
        assert!(
            matches!(e.state, DeviceState::NoPermissions { .. }),
            "{e:?}"
        );
        assert_eq!(e.usb.as_deref(), Some("1-1"));
        let e = one("R58N12ABCDEF           unauthorized usb:1-1 transport_id:2\n");
        assert_eq!(
            (e.serial.as_str(), &e.state),
            ("R58N12ABCDEF", &DeviceState::Unauthorized)
        );
    }

    #[test]
    fn route_kinds_from_the_adb_serial() {
        let kind = |t| RouteKind::of(Some("127.0.0.1:5037"), t);
        assert_eq!(kind("R58N12ABCDEF"), RouteKind::UsbAdbServer);
        assert_eq!(kind("192.168.1.5:5555"), RouteKind::WifiAdbServer);
        assert_eq!(
            kind("adb-R58N12ABCDEF-AbCdEf._adb-tls-connect._tcp"),
            RouteKind::WifiAdbServer
        );
        assert_eq!(kind("[fe80::1]:5555"), RouteKind::WifiAdbServer);
        assert_eq!(kind("emulator-5554"), RouteKind::Emulator);
        assert_eq!(RouteKind::of(None, "tcp:10.0.0.2:5555"), RouteKind::Direct);
    }

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/devices/",
                $name
            ))
        };
    }

    fn one(text: &str) -> DeviceEntry {
        let list = parse_devices_l(text);
        assert_eq!(list.len(), 1, "{list:?}");
        list.into_iter().next().expect("one entry")
    }

    #[test]
    fn short_form_states() {
        let e = one(fixture!("emulator-offline-tab.txt"));
        assert_eq!(
            (e.serial.as_str(), &e.state),
            ("emulator-5554", &DeviceState::Offline)
        );
        let list = parse_devices_l(fixture!("emulators-device-and-offline-spaces.txt"));
        assert_eq!(list.len(), 2);
        assert_eq!(
            (list[0].serial.as_str(), &list[0].state),
            ("emulator-5564", &DeviceState::Device)
        );
        assert_eq!(
            (list[1].serial.as_str(), &list[1].state),
            ("emulator-5574", &DeviceState::Offline)
        );
        let e = one(fixture!("tcpip-device-offline.txt"));
        assert_eq!(
            (e.serial.as_str(), &e.state),
            ("203.0.113.160:5555", &DeviceState::Offline)
        );
        let e = one(fixture!("unauthorized-2015.txt"));
        assert_eq!(
            (e.serial.as_str(), &e.state),
            ("XXXXXXXXXXXXXXXX", &DeviceState::Unauthorized)
        );
        assert!(e
            .state
            .remedy(RouteKind::UsbAdbServer)
            .is_some_and(|r| r.contains("RSA")));
        assert_eq!(e.transport_id, None);
    }

    #[test]
    fn long_form_fields() {
        let e = one(fixture!("huawei-mate10-devices-l-usb-transport-id.txt"));
        assert_eq!(e.serial, "XXXXXXXXXXXXXXXX");
        assert_eq!(e.state, DeviceState::Device);
        assert_eq!(e.usb.as_deref(), Some("1114112X"));
        assert_eq!(e.product.as_deref(), Some("ALP-AL00"));
        assert_eq!(e.model.as_deref(), Some("ALP_AL00"));
        assert_eq!(e.device.as_deref(), Some("HWALP"));
        assert_eq!(e.transport_id, Some(23));
        let e = one(fixture!("xiaomi-alioth-devices-l-line.txt"));
        assert_eq!(e.serial, "XXXXXXXX");
        assert_eq!(e.usb.as_deref(), Some("0-1.5"));
        assert_eq!(e.model.as_deref(), Some("M2012K11AC"));
        assert_eq!(e.transport_id, Some(58));
        assert_eq!(e.state.remedy(RouteKind::UsbAdbServer), None);
    }

    #[test]
    fn serials_are_byte_exact() {
        // host:track-devices payload `0017 GS000000000001\tdevice\n` (scrcpy PR #6664).
        let e = one(" GS000000000001\tdevice\n");
        assert_eq!(e.serial, " GS000000000001");
        assert_eq!(e.state, DeviceState::Device);
        let e = one("XXXXXXXX\tno permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html]\r\n");
        assert_eq!(e.serial, "XXXXXXXX");
        assert!(matches!(e.state, DeviceState::NoPermissions { .. }));
    }

    #[test]
    fn no_permissions_sentence() {
        const HINT: &str = "(missing udev rules? user is in the plugdev group); see \
                            [http://developer.android.com/tools/device.html]";
        // The issue author redacted the serial to `<ID removed>` (with a space): the TAB decides.
        let e = one(fixture!("linux-no-permissions-missing-udev-rules.txt"));
        assert_eq!(e.serial, "<ID removed>");
        assert_eq!(
            e.state,
            DeviceState::NoPermissions {
                hint: HINT.to_string()
            }
        );
        let e = one(fixture!("linux-no-permissions-quest3-line.txt"));
        assert_eq!(e.serial, "XXXXXXXXXXXXXX");
        assert_eq!(
            e.state,
            DeviceState::NoPermissions {
                hint: HINT.to_string()
            }
        );
        assert_eq!(e.state.as_str(), "no permissions");
        assert!(e
            .state
            .remedy(RouteKind::UsbAdbServer)
            .is_some_and(|r| r.contains("udev")));
    }

    #[test]
    fn field_bug_13_mixed_list_keeps_every_device() {
        let text = "* daemon not running; starting now at tcp:5037\n* daemon started successfully\n\
            List of devices attached\n\
            R58M123ABC             device usb:1-1 product:beyond1 model:SM_G973F device:beyond1 transport_id:1\n\
            0123456789ABCDEF       unauthorized usb:1-2 transport_id:2\n\
            ZY22XXXXXX             no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:1-3 transport_id:3\n\
            (no serial number)     rescue transport_id:4\n\
            lonely\n\n";
        let list = parse_devices_l(text);
        assert_eq!(list.len(), 4, "{list:?}");
        assert_eq!(list[0].state, DeviceState::Device);
        assert_eq!(list[0].model.as_deref(), Some("SM_G973F"));
        assert_eq!(list[1].state, DeviceState::Unauthorized);
        assert_eq!(list[1].usb.as_deref(), Some("1-2"));
        assert_eq!(list[2].serial, "ZY22XXXXXX");
        assert!(
            matches!(&list[2].state, DeviceState::NoPermissions { hint } if hint.ends_with("device.html]"))
        );
        assert_eq!(
            (list[2].usb.as_deref(), list[2].transport_id),
            (Some("1-3"), Some(3))
        );
        assert_eq!(list[3].serial, "(no serial number)");
        assert_eq!(list[3].state, DeviceState::Unknown("rescue".into()));
        assert_eq!(list[3].state.as_str(), "rescue");
    }
}
