//! A bidirectional byte stream to one device service (`shell,v2,raw:…`, `exec:…`, `sync:`),
//! whichever way it was opened: through the adb server (a TCP socket after
//! `host:transport:<serial>`) or over a direct adbd transport (OPEN/WRTE/CLSE).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::direct::DirectStream;
use super::error::AdbError;

/// Read chunk size for server-backed streams (bytes).
const READ_CHUNK: usize = 64 * 1024;

/// An open device service stream. Dropping it closes the service (the device sees EOF/CLSE).
pub enum ServiceStream {
    /// Through the adb server.
    Server(TcpStream),
    /// Over a direct transport.
    Direct(DirectStream),
}

impl ServiceStream {
    /// Next chunk of bytes from the device; `None` when the service closed the stream.
    pub async fn read_chunk(&mut self) -> Result<Option<Vec<u8>>, AdbError> {
        match self {
            ServiceStream::Server(tcp) => {
                let mut buf = vec![0u8; READ_CHUNK];
                let n = tcp.read(&mut buf).await?;
                if n == 0 {
                    return Ok(None);
                }
                buf.truncate(n);
                Ok(Some(buf))
            }
            ServiceStream::Direct(d) => d.read_chunk().await,
        }
    }

    /// Writes all bytes to the service.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), AdbError> {
        match self {
            ServiceStream::Server(tcp) => {
                tcp.write_all(data).await?;
                Ok(())
            }
            ServiceStream::Direct(d) => d.write_all(data).await,
        }
    }

    /// Reads until EOF, failing with [`AdbError::OutputTooLarge`] past `limit` bytes.
    /// A 10 MB raw frame is read with no per-chunk buffer: through the adb server straight
    /// into the growing result (no zeroing), over a direct transport the first WRTE payload
    /// becomes the result and later ones are appended.
    pub async fn read_to_end(&mut self, limit: usize) -> Result<Vec<u8>, AdbError> {
        self.read_to_end_announced(limit, usize::MAX, |_| None, Vec::with_capacity)
            .await
    }

    /// Reads until EOF (as [`Self::read_to_end`], which is this without an announcement), for
    /// output whose first bytes announce its total length (a raw `screencap` dump: width × height × bytes per pixel after its header).
    /// Once `head` bytes are in, `announced(first bytes)` may name the total (bytes); the rest is
    /// then read into one buffer of that size from `buffer` (a reused frame buffer) instead of
    /// doubling a new one up to it. An announcement over `limit` is [`AdbError::OutputTooLarge`]
    /// at once. A wrong announcement only costs the optimisation: reading goes on to EOF, and
    /// the limit is enforced as in `read_to_end`.
    pub async fn read_to_end_announced(
        &mut self,
        limit: usize,
        head: usize,
        announced: fn(&[u8]) -> Option<usize>,
        buffer: fn(usize) -> Vec<u8>,
    ) -> Result<Vec<u8>, AdbError> {
        let mut out: Vec<u8> = Vec::new();
        // From the first chunk to EOF the reply's bytes move (see `meter`).
        let mut first_chunk: Option<std::time::Instant> = None;
        // `None` until `head` bytes are in; then whether the result has its announced size.
        let mut exact: Option<bool> = None;
        // An announcement over `limit` fails at once: nothing past the header is transferred.
        let size_once = |out: &mut Vec<u8>, exact: &mut Option<bool>| {
            if exact.is_some() || out.len() < head {
                return Ok(());
            }
            let total = announced(out).filter(|t| *t > out.len());
            if total.is_some_and(|t| t > limit) {
                return Err(AdbError::OutputTooLarge { limit });
            }
            if let Some(total) = total {
                // One byte more than announced, so EOF is seen without another reservation.
                let mut sized_buf = buffer(total + 1);
                sized_buf.extend_from_slice(out);
                *out = sized_buf;
            }
            *exact = Some(total.is_some());
            Ok(())
        };
        match self {
            ServiceStream::Server(tcp) => loop {
                size_once(&mut out, &mut exact)?;
                // Room for a full chunk per read, except in a buffer of the announced size
                // (growing it would copy the frame).
                let spare = out.capacity() - out.len();
                if spare == 0 || (spare < READ_CHUNK && exact != Some(true)) {
                    out.reserve(READ_CHUNK);
                }
                if tcp.read_buf(&mut out).await? == 0 {
                    break;
                }
                first_chunk.get_or_insert_with(std::time::Instant::now);
                if out.len() > limit {
                    return Err(AdbError::OutputTooLarge { limit });
                }
            },
            ServiceStream::Direct(d) => {
                while let Some(chunk) = d.read_chunk().await? {
                    first_chunk.get_or_insert_with(std::time::Instant::now);
                    if out.len() + chunk.len() > limit {
                        return Err(AdbError::OutputTooLarge { limit });
                    }
                    if out.is_empty() {
                        out = chunk;
                    } else {
                        out.extend_from_slice(&chunk);
                    }
                    size_once(&mut out, &mut exact)?;
                }
            }
        }
        if let Some(t) = first_chunk {
            super::meter::transfer(t.elapsed());
        }
        Ok(out)
    }
}

/// Buffered exact reads over a [`ServiceStream`] (sync protocol frames span chunks).
pub struct FrameReader<'a> {
    stream: &'a mut ServiceStream,
    buf: Vec<u8>,
}

impl<'a> FrameReader<'a> {
    /// Wraps a stream.
    pub fn new(stream: &'a mut ServiceStream) -> Self {
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    /// Reads exactly `n` bytes; EOF first is a protocol error.
    pub async fn read_exact(&mut self, n: usize) -> Result<Vec<u8>, AdbError> {
        while self.buf.len() < n {
            match self.stream.read_chunk().await? {
                Some(chunk) => self.buf.extend_from_slice(&chunk),
                None => {
                    return Err(AdbError::Protocol(
                        "device closed the stream mid-frame".into(),
                    ))
                }
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Writes through to the stream.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), AdbError> {
        self.stream.write_all(data).await
    }
}
