//! PeerInfo (`pairing_connection.h`): exactly 8192 bytes — a type byte, then the data, NUL
//! padded. Type 0 carries the host's adb public-key line (`adbkey.pub` contents: base64 of the
//! 524-byte key struct, a space, `user@host`, no newline); type 1 the device's GUID
//! (`adb-<serial>-<6 alnum>`, the `_adb-tls-connect._tcp` instance name).

/// Size of an encoded PeerInfo, bytes.
pub const SIZE: usize = 8192;
/// Longest data: 8191 bytes after the type byte, less one for the NUL adb keeps
/// (`CHECK_LE(public_key.size(), kMaxPeerInfoSize - 1)`).
pub const MAX_DATA: usize = SIZE - 2;
/// Type of the host's RSA public-key line (`ADB_RSA_PUB_KEY`).
pub const TYPE_RSA_PUB_KEY: u8 = 0;
/// Type of the device GUID (`ADB_DEVICE_GUID`).
pub const TYPE_DEVICE_GUID: u8 = 1;

/// What a PeerInfo says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerInfo {
    /// The host's public-key line (`base64 user@host`).
    RsaPublicKey(String),
    /// The device's GUID.
    DeviceGuid(String),
}

/// A PeerInfo that cannot be encoded or decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PeerInfoError {
    /// Decoded size other than 8192 bytes.
    #[error("PeerInfo is {0} bytes, expected 8192")]
    Size(usize),
    /// A type byte other than 0 and 1.
    #[error("unknown PeerInfo type {0}")]
    Type(u8),
    /// Data that is empty, not UTF-8, or longer than [`MAX_DATA`].
    #[error("PeerInfo data is {0}")]
    Data(&'static str),
}

impl PeerInfo {
    /// The 8192-byte encoding. Errors: [`PeerInfoError::Data`] for empty, NUL-containing or
    /// over-long data.
    pub fn encode(&self) -> Result<Vec<u8>, PeerInfoError> {
        let (kind, data) = match self {
            PeerInfo::RsaPublicKey(s) => (TYPE_RSA_PUB_KEY, s.as_bytes()),
            PeerInfo::DeviceGuid(s) => (TYPE_DEVICE_GUID, s.as_bytes()),
        };
        if data.is_empty() {
            return Err(PeerInfoError::Data("empty"));
        }
        if data.len() > MAX_DATA {
            return Err(PeerInfoError::Data("longer than 8190 bytes"));
        }
        if data.contains(&0) {
            return Err(PeerInfoError::Data("holding a NUL"));
        }
        let mut out = vec![0u8; SIZE];
        out[0] = kind;
        out[1..1 + data.len()].copy_from_slice(data);
        Ok(out)
    }

    /// Parses an 8192-byte PeerInfo; the data ends at the first NUL.
    pub fn decode(bytes: &[u8]) -> Result<PeerInfo, PeerInfoError> {
        if bytes.len() != SIZE {
            return Err(PeerInfoError::Size(bytes.len()));
        }
        let data = &bytes[1..];
        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
        let text = std::str::from_utf8(&data[..end])
            .map_err(|_| PeerInfoError::Data("not UTF-8"))?
            .to_string();
        if text.is_empty() {
            return Err(PeerInfoError::Data("empty"));
        }
        match bytes[0] {
            TYPE_RSA_PUB_KEY => Ok(PeerInfo::RsaPublicKey(text)),
            TYPE_DEVICE_GUID => Ok(PeerInfo::DeviceGuid(text)),
            other => Err(PeerInfoError::Type(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_pads() {
        let info = PeerInfo::DeviceGuid("adb-SIM0001-AbCdEf".into());
        let bytes = info.encode().unwrap();
        assert_eq!(bytes.len(), SIZE);
        assert_eq!(bytes[0], 1);
        assert_eq!(&bytes[1..19], b"adb-SIM0001-AbCdEf");
        assert!(bytes[19..].iter().all(|&b| b == 0));
        assert_eq!(PeerInfo::decode(&bytes).unwrap(), info);
        let key = PeerInfo::RsaPublicKey("QAAAAB= user@host".into());
        assert_eq!(key.encode().unwrap()[0], 0);
        assert_eq!(PeerInfo::decode(&key.encode().unwrap()).unwrap(), key);
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert_eq!(PeerInfo::decode(&[0; 10]), Err(PeerInfoError::Size(10)));
        assert_eq!(
            PeerInfo::decode(&vec![0; SIZE + 1]),
            Err(PeerInfoError::Size(SIZE + 1))
        );
        let mut b = vec![0u8; SIZE];
        assert_eq!(PeerInfo::decode(&b), Err(PeerInfoError::Data("empty")));
        b[1] = b'x';
        b[0] = 7;
        assert_eq!(PeerInfo::decode(&b), Err(PeerInfoError::Type(7)));
        b[0] = 1;
        b[2] = 0xff;
        assert_eq!(PeerInfo::decode(&b), Err(PeerInfoError::Data("not UTF-8")));
        // No NUL at all: the data runs to the end and still decodes.
        let full = vec![b'a'; SIZE];
        assert!(matches!(
            PeerInfo::decode(&full),
            Err(PeerInfoError::Type(b'a'))
        ));
        let long = PeerInfo::DeviceGuid("a".repeat(MAX_DATA + 1));
        assert!(long.encode().is_err());
        assert!(PeerInfo::DeviceGuid("a".repeat(MAX_DATA)).encode().is_ok());
        assert!(PeerInfo::DeviceGuid("a\0b".into()).encode().is_err());
    }
}
