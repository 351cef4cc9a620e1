//! Reading `packet_id` and `request_id` from a text frame that failed to decode, so its
//! `invalid_packet` answer carries `reply_to`/`request_id` and the client can match it to its
//! request (spec §7: "Ack packet 应带回请求的 request_id").
//!
//! A frame fails [`super::Packet::decode`] for many reasons that say nothing about these two
//! fields: a number out of range (`"time":1e400`), nesting past serde_json's recursion limit,
//! a field of the wrong type, a duplicate key, trailing text, a frame cut short. So the frame is
//! not parsed as JSON here but scanned: the top-level object's members are walked one by one
//! (strings decoded by serde_json, every other value skipped by bracket and string matching,
//! never interpreted, without recursion), and the scan keeps what it read when it meets the
//! first thing it cannot read. A field is echoed when it was read as a non-empty string of at
//! most [`MAX_ECHOED_BYTES`] bytes and, if given more than once, with one value each time
//! (two different values: neither is the request's, nothing is echoed).

/// Longest id echoed (bytes); a longer one is not an id xAgent issued.
pub const MAX_ECHOED_BYTES: usize = 128;

/// The ids a frame carries, as far as they can be read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FrameIds {
    /// The frame's `packet_id` (echoed as `reply_to`).
    pub packet_id: Option<String>,
    /// The frame's `request_id` (echoed as `request_id`).
    pub request_id: Option<String>,
}

/// One field's readings: `Err(())` once two different values were read.
type Reading = Option<Result<String, ()>>;

impl FrameIds {
    /// Scans `text` (see the module doc). Never fails; an array, a scalar or text that is no
    /// object at all gives no ids.
    pub fn scan(text: &str) -> FrameIds {
        let mut packet_id: Reading = None;
        let mut request_id: Reading = None;
        let mut s = Scanner {
            bytes: text.as_bytes(),
            at: 0,
        };
        let _ = s.members(|key, value| {
            let slot = match key.as_str() {
                "packet_id" => &mut packet_id,
                "request_id" => &mut request_id,
                _ => return,
            };
            // A non-string value, or one that does not decode (a lone surrogate escape), is a
            // reading too: the field is there but not readable as an id.
            let value = value.unwrap_or_default();
            *slot = match slot.take() {
                None => Some(Ok(value)),
                Some(Ok(seen)) if seen == value => Some(Ok(seen)),
                Some(_) => Some(Err(())),
            };
        });
        FrameIds {
            packet_id: echoable(packet_id),
            request_id: echoable(request_id),
        }
    }
}

fn echoable(reading: Reading) -> Option<String> {
    reading?
        .ok()
        .filter(|s| !s.is_empty() && s.len() <= MAX_ECHOED_BYTES)
}

/// Where the scan stopped reading (the members read before it are kept).
struct Unreadable;

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), Unreadable> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Unreadable)
        }
    }

    /// Walks the members of the top-level object, calling `found(key, string value or None)`
    /// for each member read whole (a member whose value is cut short is not reported).
    fn members(&mut self, mut found: impl FnMut(String, Option<String>)) -> Result<(), Unreadable> {
        self.expect(b'{')?;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            return Ok(());
        }
        loop {
            self.skip_ws();
            let key = self.string()?.ok_or(Unreadable)?;
            self.expect(b':')?;
            self.skip_ws();
            let value = match self.peek() {
                Some(b'"') => Some(self.string()?),
                _ => {
                    self.skip_value()?;
                    None
                }
            };
            found(key, value.flatten());
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => return Ok(()),
                _ => return Err(Unreadable),
            }
        }
    }

    /// A string token at the cursor: `Ok(None)` when it is whole but does not decode
    /// (serde_json decides escapes); `Err` when there is no whole string here.
    fn string(&mut self) -> Result<Option<String>, Unreadable> {
        if self.peek() != Some(b'"') {
            return Err(Unreadable);
        }
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek().ok_or(Unreadable)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        let token = self.bytes.get(start..self.at).ok_or(Unreadable)?;
        Ok(std::str::from_utf8(token)
            .ok()
            .and_then(|t| serde_json::from_str::<String>(t).ok()))
    }

    /// Skips one value of any kind without interpreting it: a string, an object or array
    /// (brackets counted, strings inside skipped whole), or a scalar up to the next `,`, `}`,
    /// `]` or whitespace.
    fn skip_value(&mut self) -> Result<(), Unreadable> {
        match self.peek().ok_or(Unreadable)? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek().ok_or(Unreadable)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
            }
            _ => {
                let start = self.at;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
                if self.at == start {
                    Err(Unreadable)
                } else {
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> (Option<String>, Option<String>) {
        let f = FrameIds::scan(text);
        (f.packet_id, f.request_id)
    }

    fn both(p: &str, r: &str) -> (Option<String>, Option<String>) {
        (Some(p.into()), Some(r.into()))
    }

    #[test]
    fn ids_are_read_whatever_else_is_wrong() {
        let deep = format!(
            r#"{{"packet_id":"p1","request_id":"r1","payload":{}{}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let cases = [
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p1","request_id":"r1","type":"ping","time":1e400}"#.to_string(),
            r#"{"time":-1e999999,"packet_id":"p1","request_id":"r1"}"#.into(),
            r#"{"time":123456789012345678901234567890,"request_id":"r1","packet_id":"p1"}"#.into(),
            deep,
            r#"{"packet_id":"p1","request_id":"r1","type":["ping"]}"#.into(),
            r#"{"packet_id":"p1","request_id":"r1","type":"ping","type":"pong"}"#.into(),
            r#"{"packet_id":"p1","request_id":"r1","payload":{"a":"}]\"{"}} trailing"#.into(),
            r#"  {"packet_id" : "p1" ,"request_id":"r1","payload":{"x":"#.into(),
            r#"{"packet_id":"p\u0031","request_id":"r1","payload":"\ud800"}"#.into(),
            r#"{"packet_id":"p1","packet_id":"p1","request_id":"r1","time":NaN}"#.into(),
        ];
        for text in cases {
            let short = &text[..text.len().min(80)];
            assert_eq!(ids(&text), both("p1", "r1"), "{short}");
        }
    }

    #[test]
    fn unreadable_or_ambiguous_ids_are_not_echoed() {
        let none = (None, None);
        assert_eq!(ids("[1,2]"), none);
        assert_eq!(ids("\"packet_id\""), none);
        assert_eq!(ids(""), none);
        assert_eq!(ids(r#"{"packet_id":1,"request_id":true}"#), none);
        assert_eq!(ids(r#"{"packet_id":"","request_id":"\ud800"}"#), none);
        // Two different values: neither is the request's.
        assert_eq!(
            ids(r#"{"packet_id":"a","packet_id":"b","request_id":"r"}"#),
            (None, Some("r".into()))
        );
        // A string value and a number under one key: not readable as one id.
        assert_eq!(ids(r#"{"request_id":"r","request_id":7}"#), none);
        // Cut inside the value: not read; members before the cut are.
        assert_eq!(
            ids(r#"{"request_id":"r1","packet_id":"p1"#),
            (None, Some("r1".into()))
        );
        // Only top-level members count.
        assert_eq!(ids(r#"{"payload":{"packet_id":"inner"}}"#), none);
        let long = "x".repeat(MAX_ECHOED_BYTES + 1);
        assert_eq!(
            ids(&format!(r#"{{"packet_id":"{long}","request_id":"r"}}"#)),
            (None, Some("r".into()))
        );
    }
}
