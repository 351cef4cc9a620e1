//! The QR code text of "Pair device with QR code" (`docs/dev/adb_wifi.md`): ZXing's Wi-Fi
//! syntax with type `ADB` — `WIFI:T:ADB;S:<service name>;P:<password>;;`. `S` is the mDNS
//! instance name the phone registers for `_adb-tls-pairing._tcp`; `P` is the pairing password.
//! Phones parse escapes differently across Android versions (notes §1.1), so both fields stay
//! within characters that never need one: none of `;:,"\`, no spaces.

use zeroize::Zeroizing;

/// Prefix of generated service names.
pub const NAME_PREFIX: &str = "xagent-";
/// Random alphanumerics after [`NAME_PREFIX`].
pub const NAME_RANDOM_LEN: usize = 10;
/// Length of generated passwords (random alphanumerics; some phones reject short ones).
pub const PASSWORD_LEN: usize = 16;
/// Longest service name (one DNS label), bytes.
pub const MAX_NAME_LEN: usize = 63;
/// Longest password, bytes.
pub const MAX_PASSWORD_LEN: usize = 63;

/// A QR text that is not an adb pairing code, or a field we will not put in one.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QrError {
    /// Not `WIFI:…;;`.
    #[error("not a Wi-Fi QR text (expected WIFI:T:ADB;S:…;P:…;;)")]
    NotWifi,
    /// `T:` missing or other than `ADB`.
    #[error("the QR code is not for adb pairing (T:ADB missing)")]
    NotAdb,
    /// `S:` or `P:` missing, empty, too long, or holding a character that needs escaping.
    #[error("the QR code's {0} field is missing or not plain ASCII without ;:,\"\\ or spaces")]
    Field(&'static str),
}

/// One pairing offer: a service name and a password. `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct QrPairing {
    service_name: String,
    password: Zeroizing<String>,
}

impl std::fmt::Debug for QrPairing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QrPairing")
            .field("service_name", &self.service_name)
            .field("password", &"<redacted>")
            .finish()
    }
}

fn plain(value: &str, max: usize) -> bool {
    !value.is_empty()
        && value.len() <= max
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b";:,\"\\".contains(&b))
}

impl QrPairing {
    /// A fresh offer: `xagent-` + 10 random alphanumerics, 16 random alphanumerics.
    pub fn generate() -> QrPairing {
        QrPairing {
            service_name: format!(
                "{NAME_PREFIX}{}",
                crate::random::alphanumeric(NAME_RANDOM_LEN)
            ),
            password: Zeroizing::new(crate::random::alphanumeric(PASSWORD_LEN)),
        }
    }

    /// An offer from given fields. Errors: [`QrError::Field`].
    pub fn new(service_name: &str, password: &str) -> Result<QrPairing, QrError> {
        if !plain(service_name, MAX_NAME_LEN) {
            return Err(QrError::Field("S (service name)"));
        }
        if !plain(password, MAX_PASSWORD_LEN) {
            return Err(QrError::Field("P (password)"));
        }
        Ok(QrPairing {
            service_name: service_name.to_string(),
            password: Zeroizing::new(password.to_string()),
        })
    }

    /// The `_adb-tls-pairing._tcp` instance name the phone will register.
    pub fn service_name(&self) -> &str {
        &self.service_name
    }

    /// The password, for the pairing exchange only: never log it.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// `WIFI:T:ADB;S:<name>;P:<password>;;` — holds the password.
    pub fn text(&self) -> Zeroizing<String> {
        Zeroizing::new(format!(
            "WIFI:T:ADB;S:{};P:{};;",
            self.service_name, &*self.password
        ))
    }

    /// Parses a QR text as a phone's scanner would (fields in any order, unknown ones such as
    /// `H:` ignored); escapes are refused since [`QrPairing::new`] never needs them.
    /// Errors: [`QrError`].
    pub fn parse(text: &str) -> Result<QrPairing, QrError> {
        let body = text
            .trim()
            .strip_prefix("WIFI:")
            .and_then(|b| b.strip_suffix(";;"))
            .ok_or(QrError::NotWifi)?;
        let (mut kind, mut name, mut password) = (None, None, None);
        for field in body.split(';') {
            match field.split_once(':') {
                Some(("T", v)) => kind = Some(v),
                Some(("S", v)) => name = Some(v),
                Some(("P", v)) => password = Some(v),
                _ => {}
            }
        }
        if kind != Some("ADB") {
            return Err(QrError::NotAdb);
        }
        QrPairing::new(
            name.ok_or(QrError::Field("S (service name)"))?,
            password.ok_or(QrError::Field("P (password)"))?,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_offers_have_the_promised_shape() {
        let a = QrPairing::generate();
        let b = QrPairing::generate();
        assert_ne!(a, b);
        let name = a.service_name();
        assert!(name.starts_with("xagent-") && name.len() == 17, "{name}");
        assert!(name[7..].bytes().all(|c| c.is_ascii_alphanumeric()));
        assert!(a.password().len() >= 12);
        assert!(a.password().bytes().all(|c| c.is_ascii_alphanumeric()));
        let text = a.text();
        assert_eq!(*text, format!("WIFI:T:ADB;S:{name};P:{};;", a.password()));
        assert_eq!(QrPairing::parse(&text).unwrap(), a);
        assert!(!format!("{a:?}").contains(a.password()));
    }

    #[test]
    fn parses_what_phones_accept_and_refuses_the_rest() {
        let q = QrPairing::parse("WIFI:S:studio-abc;T:ADB;H:false;P:Aq9vCx7Lw2Pz;;").unwrap();
        assert_eq!(
            (q.service_name(), q.password()),
            ("studio-abc", "Aq9vCx7Lw2Pz")
        );
        assert_eq!(QrPairing::parse("hello"), Err(QrError::NotWifi));
        assert_eq!(
            QrPairing::parse("WIFI:T:WPA;S:x;P:y;;"),
            Err(QrError::NotAdb)
        );
        assert!(matches!(
            QrPairing::parse("WIFI:T:ADB;S:x;;"),
            Err(QrError::Field(_))
        ));
        assert!(matches!(
            QrPairing::parse("WIFI:T:ADB;S:;P:y;;"),
            Err(QrError::Field(_))
        ));
        assert!(matches!(
            QrPairing::parse("WIFI:T:ADB;S:a\\b;P:y;;"),
            Err(QrError::Field(_))
        ));
        for bad in ["a;b", "a:b", "a,b", "a\"b", "a b", ""] {
            assert!(QrPairing::new(bad, "password12").is_err(), "{bad:?}");
            assert!(QrPairing::new("name", bad).is_err(), "{bad:?}");
        }
        assert!(QrPairing::new(&"n".repeat(64), "p").is_err());
    }
}
