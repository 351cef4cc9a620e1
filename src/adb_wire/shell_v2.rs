//! Shell protocol v2 packet framing: `u8 id; u32 len (LE); data[len]`.
//! Source: AOSP `packages/modules/adb/shell_protocol.h`. Packets may be split or coalesced across
//! `WRTE` messages, so [`ShellV2Decoder`] buffers.

/// Packet id: stdin data (host → device).
pub const ID_STDIN: u8 = 0;
/// Packet id: stdout data.
pub const ID_STDOUT: u8 = 1;
/// Packet id: stderr data.
pub const ID_STDERR: u8 = 2;
/// Packet id: exit status, 1 byte.
pub const ID_EXIT: u8 = 3;
/// Packet id: close stdin (len 0).
pub const ID_CLOSE_STDIN: u8 = 4;
/// Packet id: window size change (`"%dx%d,%dx%d\0"`).
pub const ID_WINDOW_SIZE_CHANGE: u8 = 5;

/// Largest packet data accepted: 1 MiB, the ADB `MAX_PAYLOAD` adbd's `ShellProtocol` buffer is
/// sized from (`shell_protocol.h`: `char buffer_[MAX_PAYLOAD]`). A header declaring more is a
/// corrupt stream: without this bound a decoder would buffer everything the peer sends.
pub const MAX_PACKET_DATA: usize = 1024 * 1024;

/// Encodes one shell v2 packet.
pub fn encode(id: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + data.len());
    out.push(id);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// Incremental decoder of shell v2 packets. Holds at most one packet (≤ 5 +
/// [`MAX_PACKET_DATA`] bytes) plus the last pushed chunk; once a header declares more than
/// [`MAX_PACKET_DATA`] the stream is [`oversized`](Self::oversized) and further bytes are dropped.
#[derive(Default, Debug)]
pub struct ShellV2Decoder {
    buf: Vec<u8>,
    oversized: Option<u32>,
}

impl ShellV2Decoder {
    /// Appends bytes received from the stream (dropped once the stream is oversized).
    pub fn push(&mut self, bytes: &[u8]) {
        if self.oversized.is_none() {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Returns the next complete packet `(id, data)`, if buffered. `None` as well once the
    /// stream is [`oversized`](Self::oversized).
    pub fn next_packet(&mut self) -> Option<(u8, Vec<u8>)> {
        if self.buf.len() < 5 || self.oversized.is_some() {
            return None;
        }
        let declared = u32::from_le_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
        let len = declared as usize;
        if len > MAX_PACKET_DATA {
            self.oversized = Some(declared);
            self.buf = Vec::new();
            return None;
        }
        if self.buf.len() < 5 + len {
            return None;
        }
        let id = self.buf[0];
        let data = self.buf[5..5 + len].to_vec();
        self.buf.drain(..5 + len);
        Some((id, data))
    }

    /// The data length a packet header declared above [`MAX_PACKET_DATA`], if one did: the
    /// peer is not speaking shell v2 and the stream should be closed as a protocol error.
    pub fn oversized(&self) -> Option<u32> {
        self.oversized
    }

    /// Bytes buffered and not yet returned as packets.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_coalesced() {
        // Capture from adb 34 (research notes §5.2): stdout "hi\n" then exit 0.
        let wire = [&encode(ID_STDOUT, b"hi\n")[..], &encode(ID_EXIT, &[0])[..]].concat();
        assert_eq!(&wire[..8], &[1, 3, 0, 0, 0, b'h', b'i', b'\n']);
        let mut d = ShellV2Decoder::default();
        d.push(&wire[..3]);
        assert_eq!(d.next_packet(), None);
        d.push(&wire[3..]);
        assert_eq!(d.next_packet(), Some((ID_STDOUT, b"hi\n".to_vec())));
        assert_eq!(d.next_packet(), Some((ID_EXIT, vec![0])));
        assert_eq!(d.next_packet(), None);
    }

    #[test]
    fn oversized_header_stops_buffering() {
        // A header declaring 4 GiB (found by the shell_v2 fuzz target: the decoder buffered
        // every later byte waiting for it).
        let mut d = ShellV2Decoder::default();
        d.push(&[ID_STDOUT, 0xff, 0xff, 0xff, 0xff, b'x']);
        assert_eq!(d.next_packet(), None);
        assert_eq!(d.oversized(), Some(u32::MAX));
        d.push(&[0u8; 4096]);
        assert_eq!(d.buffered(), 0);
        assert_eq!(d.next_packet(), None);
    }
}
