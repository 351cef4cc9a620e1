//! Pairing packets (`PairingPacketHeader` in `pairing_connection.cpp`): a 6-byte header —
//! version (1), type (0 = SPAKE2 message, 1 = PeerInfo), payload length as a **big-endian**
//! u32 in 1..=16384 — then the payload. Anything else is a protocol error, never a panic.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Header length, bytes.
pub const HEADER_LEN: usize = 6;
/// The only version adb sends and accepts (`kCurrentKeyHeaderVersion`).
pub const VERSION: u8 = 1;
/// Largest payload (`kMaxPayloadSize = 2 · 8192`), bytes.
pub const MAX_PAYLOAD: usize = 16384;

/// Packet types (`proto/pairing.proto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketType {
    /// A 32-byte SPAKE2 message.
    Spake2Msg = 0,
    /// A sealed 8192-byte PeerInfo (8208 bytes with the tag).
    PeerInfo = 1,
}

/// A malformed header or a failed read/write.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// Header version other than 1.
    #[error("pairing packet version {0}, expected 1")]
    Version(u8),
    /// Type other than the one expected at this step (or unknown).
    #[error("pairing packet type {got}, expected {want:?}")]
    Type {
        /// What the exchange is waiting for.
        want: PacketType,
        /// The type byte received.
        got: u8,
    },
    /// Length 0 or above [`MAX_PAYLOAD`].
    #[error("pairing packet length {0} outside 1..=16384")]
    Length(u32),
    /// The payload handed to [`encode`] is empty or too long.
    #[error("payload of {0} bytes cannot be framed (1..=16384)")]
    PayloadSize(usize),
    /// The connection failed or closed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Header ‖ payload. Errors: [`PacketError::PayloadSize`].
pub fn encode(kind: PacketType, payload: &[u8]) -> Result<Vec<u8>, PacketError> {
    if payload.is_empty() || payload.len() > MAX_PAYLOAD {
        return Err(PacketError::PayloadSize(payload.len()));
    }
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.push(VERSION);
    out.push(kind as u8);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// Checks a header against the expected type; returns the payload length (1..=16384).
pub fn decode_header(header: &[u8; HEADER_LEN], want: PacketType) -> Result<usize, PacketError> {
    if header[0] != VERSION {
        return Err(PacketError::Version(header[0]));
    }
    if header[1] != want as u8 {
        return Err(PacketError::Type {
            want,
            got: header[1],
        });
    }
    let len = u32::from_be_bytes([header[2], header[3], header[4], header[5]]);
    if len == 0 || len as usize > MAX_PAYLOAD {
        return Err(PacketError::Length(len));
    }
    Ok(len as usize)
}

/// Writes one packet and flushes.
pub async fn write<W: AsyncWrite + Unpin>(
    w: &mut W,
    kind: PacketType,
    payload: &[u8],
) -> Result<(), PacketError> {
    w.write_all(&encode(kind, payload)?).await?;
    w.flush().await?;
    Ok(())
}

/// Reads one packet of type `want`; returns its payload (at most 16384 bytes are allocated).
pub async fn read<R: AsyncRead + Unpin>(
    r: &mut R,
    want: PacketType,
) -> Result<Vec<u8>, PacketError> {
    let mut header = [0u8; HEADER_LEN];
    r.read_exact(&mut header).await?;
    let len = decode_header(&header, want)?;
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).await?;
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_big_endian() {
        assert_eq!(
            encode(PacketType::Spake2Msg, &[0xaa; 32]).unwrap()[..6],
            [1, 0, 0, 0, 0, 0x20]
        );
        assert_eq!(
            encode(PacketType::PeerInfo, &[0; 8208]).unwrap()[..6],
            [1, 1, 0, 0, 0x20, 0x10]
        );
        assert!(matches!(
            encode(PacketType::PeerInfo, &[]),
            Err(PacketError::PayloadSize(0))
        ));
        assert!(matches!(
            encode(PacketType::PeerInfo, &[0; MAX_PAYLOAD + 1]),
            Err(PacketError::PayloadSize(16385))
        ));
    }

    #[test]
    fn malformed_headers_are_errors() {
        let want = PacketType::Spake2Msg;
        assert!(matches!(
            decode_header(&[2, 0, 0, 0, 0, 32], want),
            Err(PacketError::Version(2))
        ));
        assert!(matches!(
            decode_header(&[1, 1, 0, 0, 0, 32], want),
            Err(PacketError::Type { got: 1, .. })
        ));
        assert!(matches!(
            decode_header(&[1, 0, 0, 0, 0, 0], want),
            Err(PacketError::Length(0))
        ));
        assert!(matches!(
            decode_header(&[1, 0, 0xff, 0xff, 0xff, 0xff], want),
            Err(PacketError::Length(u32::MAX))
        ));
        assert_eq!(decode_header(&[1, 0, 0, 0, 0x40, 0], want).unwrap(), 16384);
    }

    #[tokio::test]
    async fn reads_back_what_it_writes_and_reports_truncation() {
        let mut buf = Vec::new();
        write(&mut buf, PacketType::PeerInfo, b"abc").await.unwrap();
        let mut r = &buf[..];
        assert_eq!(read(&mut r, PacketType::PeerInfo).await.unwrap(), b"abc");
        let mut short = &buf[..7];
        let err = read(&mut short, PacketType::PeerInfo).await.unwrap_err();
        assert!(matches!(err, PacketError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof));
    }
}
