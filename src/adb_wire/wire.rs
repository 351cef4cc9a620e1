//! ADB transport message framing, shared by the host side (direct transport) and the simulated
//! phone (device side).
//!
//! A message is a 24-byte header of six little-endian `u32`
//! (`command, arg0, arg1, data_length, data_check, magic`) followed by `data_length` payload bytes.
//! `magic == command ^ 0xffff_ffff`; `data_check` is the byte sum of the payload (not CRC32) and is
//! only required below [`A_VERSION_SKIP_CHECKSUM`]. Source: AOSP `packages/modules/adb`
//! `docs/dev/protocol.md`, `adb.h`, `transport.cpp` (`check_header`, `calculate_apacket_checksum`).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// `CNXN`: connect, carries version, max payload and the banner.
pub const A_CNXN: u32 = 0x4e58_4e43;
/// `AUTH`: token / signature / RSA public key exchange.
pub const A_AUTH: u32 = 0x4854_5541;
/// `OPEN`: open a stream to a service (`shell:`, `exec:`, `sync:` …).
pub const A_OPEN: u32 = 0x4e45_504f;
/// `OKAY`: stream ready / write acknowledged.
pub const A_OKAY: u32 = 0x5941_4b4f;
/// `WRTE`: stream data.
pub const A_WRTE: u32 = 0x4554_5257;
/// `CLSE`: stream closed.
pub const A_CLSE: u32 = 0x4553_4c43;
/// `STLS`: switch to TLS (wireless debugging port).
pub const A_STLS: u32 = 0x534c_5453;
/// `STLS` arg0 both sides send (`A_STLS_VERSION`, `adb.h`).
pub const A_STLS_VERSION: u32 = 0x0100_0000;

/// Oldest protocol version (`A_VERSION_MIN`).
pub const A_VERSION_MIN: u32 = 0x0100_0000;
/// Version from which payload checksums are skipped; also the current `A_VERSION`.
pub const A_VERSION_SKIP_CHECKSUM: u32 = 0x0100_0001;
/// Current protocol version (`A_VERSION`).
pub const A_VERSION: u32 = A_VERSION_SKIP_CHECKSUM;
/// Largest payload this side accepts: 1 MiB (`MAX_PAYLOAD`).
pub const MAX_PAYLOAD: u32 = 1024 * 1024;
/// Largest payload of CNXN/AUTH and of pre-2016 peers: 4096 bytes (`MAX_PAYLOAD_V1`).
pub const MAX_PAYLOAD_V1: u32 = 4096;

/// `AUTH` arg0: the device sends a 20-byte token to sign.
pub const AUTH_TOKEN: u32 = 1;
/// `AUTH` arg0: the host sends an RSA PKCS#1 v1.5 SHA-1 signature of the token.
pub const AUTH_SIGNATURE: u32 = 2;
/// `AUTH` arg0: the host sends its public key (`base64 user@host\0`).
pub const AUTH_RSAPUBLICKEY: u32 = 3;

/// Size of the fixed message header in bytes.
pub const HEADER_LEN: usize = 24;

/// One ADB transport message.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    /// One of the `A_*` command constants.
    pub command: u32,
    /// First argument (meaning depends on the command, e.g. local stream id).
    pub arg0: u32,
    /// Second argument (e.g. remote stream id, or max payload in CNXN).
    pub arg1: u32,
    /// Payload bytes, at most the negotiated max payload.
    pub payload: Vec<u8>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Payloads may be AUTH material or user text: print the length only.
        f.debug_struct("Message")
            .field("command", &command_name(self.command))
            .field("arg0", &self.arg0)
            .field("arg1", &self.arg1)
            .field("len", &self.payload.len())
            .finish()
    }
}

/// Framing errors.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The socket failed or closed mid-message.
    #[error("adb transport i/o: {0}")]
    Io(#[from] std::io::Error),
    /// `magic != command ^ 0xffffffff`.
    #[error("adb message has a bad magic field (command {command:#010x})")]
    BadMagic {
        /// The command word read.
        command: u32,
    },
    /// `data_length` exceeds the accepted maximum.
    #[error("adb message payload of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// Declared payload length in bytes.
        len: u32,
        /// Accepted maximum in bytes.
        max: u32,
    },
}

/// Four-letter name of a command, for logs (`"????"` when unknown).
pub fn command_name(command: u32) -> &'static str {
    match command {
        A_CNXN => "CNXN",
        A_AUTH => "AUTH",
        A_OPEN => "OPEN",
        A_OKAY => "OKAY",
        A_WRTE => "WRTE",
        A_CLSE => "CLSE",
        A_STLS => "STLS",
        _ => "????",
    }
}

/// Byte sum of a payload (`calculate_apacket_checksum`).
pub fn checksum(payload: &[u8]) -> u32 {
    payload
        .iter()
        .fold(0u32, |acc, b| acc.wrapping_add(u32::from(*b)))
}

impl Message {
    /// Builds a message.
    pub fn new(command: u32, arg0: u32, arg1: u32, payload: impl Into<Vec<u8>>) -> Self {
        Self {
            command,
            arg0,
            arg1,
            payload: payload.into(),
        }
    }

    /// Encodes header + payload. The checksum is always filled: old peers verify it, new ones
    /// ignore it, so filling it is the compatible choice.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len());
        for word in [
            self.command,
            self.arg0,
            self.arg1,
            self.payload.len() as u32,
            checksum(&self.payload),
            self.command ^ 0xffff_ffff,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.payload);
        out
    }

    /// Reads one message; `max_payload` bounds `data_length` (bytes).
    ///
    /// Errors: [`WireError::Io`] on EOF or socket failure, [`WireError::BadMagic`],
    /// [`WireError::TooLarge`].
    pub async fn read_from<R: AsyncRead + Unpin>(
        reader: &mut R,
        max_payload: u32,
    ) -> Result<Self, WireError> {
        let mut header = [0u8; HEADER_LEN];
        reader.read_exact(&mut header).await?;
        let word =
            |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4]));
        let (command, arg0, arg1, len, magic) = (word(0), word(1), word(2), word(3), word(5));
        if magic != command ^ 0xffff_ffff {
            return Err(WireError::BadMagic { command });
        }
        if len > max_payload {
            return Err(WireError::TooLarge {
                len,
                max: max_payload,
            });
        }
        let mut payload = vec![0u8; len as usize];
        reader.read_exact(&mut payload).await?;
        Ok(Self {
            command,
            arg0,
            arg1,
            payload,
        })
    }

    /// Writes the encoded message and flushes.
    pub async fn write_to<W: AsyncWrite + Unpin>(&self, writer: &mut W) -> Result<(), WireError> {
        writer.write_all(&self.encode()).await?;
        writer.flush().await?;
        Ok(())
    }
}

/// Parses a CNXN banner `type:serial:k=v;k=v;…` into its system type and properties.
/// Source: AOSP `adb.cpp parse_banner`.
pub fn parse_banner(banner: &[u8]) -> (String, Vec<(String, String)>) {
    let text = String::from_utf8_lossy(banner);
    let text = text.trim_end_matches('\0');
    let mut pieces = text.splitn(3, ':');
    let kind = pieces.next().unwrap_or_default().to_string();
    let _serial = pieces.next();
    let props = pieces
        .next()
        .unwrap_or_default()
        .split(';')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (kind, props)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trip_and_magic_check() {
        let msg = Message::new(A_WRTE, 3, 7, b"hello".to_vec());
        let bytes = msg.encode();
        assert_eq!(bytes.len(), HEADER_LEN + 5);
        let back = Message::read_from(&mut &bytes[..], MAX_PAYLOAD)
            .await
            .unwrap();
        assert_eq!(back, msg);
        let mut bad = bytes.clone();
        bad[20] ^= 1;
        assert!(matches!(
            Message::read_from(&mut &bad[..], MAX_PAYLOAD).await,
            Err(WireError::BadMagic { .. })
        ));
        assert!(matches!(
            Message::read_from(&mut &bytes[..], 4).await,
            Err(WireError::TooLarge { len: 5, max: 4 })
        ));
    }

    #[test]
    fn host_cnxn_checksum_matches_capture() {
        // adb 34 sent CNXN len=234 with data_check 0x5b44 (research notes §3.2).
        let banner = b"host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,abb_exec,remount_shell,track_app,sendrecv_v2,sendrecv_v2_brotli,sendrecv_v2_lz4,sendrecv_v2_zstd,sendrecv_v2_dry_run_send,openscreen_mdns";
        assert_eq!(banner.len(), 234);
        assert_eq!(checksum(banner), 0x5b44);
    }

    #[test]
    fn banner_props() {
        let (kind, props) = parse_banner(
            b"device::ro.product.name=sim;ro.product.model=Pixel 8;features=shell_v2,cmd",
        );
        assert_eq!(kind, "device");
        assert!(props.contains(&("ro.product.model".into(), "Pixel 8".into())));
        assert!(props.contains(&("features".into(), "shell_v2,cmd".into())));
    }
}
