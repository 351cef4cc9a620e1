//! File sync protocol framing (`sync:` service). Requests are `{u32 id (4 ASCII), u32 len LE}`
//! followed by `len` bytes; responses are `OKAY`, `FAIL`+message, `DATA`, `DONE`, `STAT`, `DENT`.
//! Source: AOSP `packages/modules/adb/file_sync_protocol.h`, `docs/dev/sync.md`.

/// Builds a 4-byte id as the little-endian u32 the wire carries.
pub const fn id(tag: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*tag)
}

/// `STAT` (lstat v1): reply `{STAT, mode, size, mtime}`; mode 0 = does not exist.
pub const ID_STAT: u32 = id(b"STAT");
/// `STA2` (stat v2, needs feature `stat_v2`).
pub const ID_STA2: u32 = id(b"STA2");
/// `LST2` (lstat v2).
pub const ID_LST2: u32 = id(b"LST2");
/// `LIST` directory listing v1.
pub const ID_LIST: u32 = id(b"LIST");
/// `LIS2` directory listing v2.
pub const ID_LIS2: u32 = id(b"LIS2");
/// `DENT` listing entry v1.
pub const ID_DENT: u32 = id(b"DENT");
/// `DNT2` listing entry v2.
pub const ID_DNT2: u32 = id(b"DNT2");
/// `SEND` v1: path is `"<path>,<decimal mode>"`.
pub const ID_SEND: u32 = id(b"SEND");
/// `SND2` (needs `sendrecv_v2`).
pub const ID_SND2: u32 = id(b"SND2");
/// `RECV` v1.
pub const ID_RECV: u32 = id(b"RECV");
/// `RCV2` (needs `sendrecv_v2`).
pub const ID_RCV2: u32 = id(b"RCV2");
/// `DONE`: end of data (carries mtime on SEND).
pub const ID_DONE: u32 = id(b"DONE");
/// `DATA`: a chunk of at most [`SYNC_DATA_MAX`] bytes.
pub const ID_DATA: u32 = id(b"DATA");
/// `OKAY`: SEND succeeded.
pub const ID_OKAY: u32 = id(b"OKAY");
/// `FAIL`: followed by a message of `len` bytes.
pub const ID_FAIL: u32 = id(b"FAIL");
/// `QUIT`: end the sync session.
pub const ID_QUIT: u32 = id(b"QUIT");

/// Largest `DATA` chunk: 64 KiB (`SYNC_DATA_MAX`).
pub const SYNC_DATA_MAX: usize = 64 * 1024;
/// Longest path accepted in a request (bytes).
pub const SYNC_PATH_MAX: usize = 1024;

/// Encodes an 8-byte request/response header plus body.
pub fn encode(id: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Encodes a header whose second word is a value, not a length (`DONE{mtime}`, `OKAY{0}`).
pub fn encode_word(id: u32, value: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(8);
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes());
    out
}

/// Encodes a v1 `STAT` reply (16 bytes).
pub fn encode_stat_v1(mode: u32, size: u32, mtime: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    for w in [ID_STAT, mode, size, mtime] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}
