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

/// Encodes one shell v2 packet.
pub fn encode(id: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + data.len());
    out.push(id);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// Incremental decoder of shell v2 packets.
#[derive(Default, Debug)]
pub struct ShellV2Decoder {
    buf: Vec<u8>,
}

impl ShellV2Decoder {
    /// Appends bytes received from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Returns the next complete packet `(id, data)`, if buffered.
    pub fn next_packet(&mut self) -> Option<(u8, Vec<u8>)> {
        if self.buf.len() < 5 {
            return None;
        }
        let len = u32::from_le_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if self.buf.len() < 5 + len {
            return None;
        }
        let id = self.buf[0];
        let data = self.buf[5..5 + len].to_vec();
        self.buf.drain(..5 + len);
        Some((id, data))
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
}
