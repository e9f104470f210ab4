//! Newline-delimited framing with a cap: [`Lines`] reads one line at a time
//! and never holds more than [`MAX_LINE`] bytes of it. A longer line is
//! discarded as it streams past (its bytes are consumed, not kept) and
//! reported once, when its newline arrives, as [`Line::TooLong`].

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The longest line (one JSON-RPC message) read, in bytes: 16 MiB, rmcp's
/// own stdio cap. Tool arguments are bounded far below it.
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// How much is read from the pipe at once.
const READ_BUFFER: usize = 64 * 1024;

/// What the next line is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// A whole line, without its `\n`.
    Text(&'a [u8]),
    /// A line longer than the cap, discarded unread; its length in bytes.
    TooLong(u64),
    /// The stream ended (a last line without `\n` is not a message).
    End,
}

/// The lines of a byte stream.
pub(crate) struct Lines<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    cap: usize,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// The lines of `read`, each at most `cap` bytes.
    pub(crate) fn new(read: R, cap: usize) -> Lines<R> {
        Lines {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            cap,
        }
    }

    /// The next line. Not cancel-safe (a cancelled read loses the part of the
    /// line read so far); it runs in its own task.
    pub(crate) async fn next(&mut self) -> std::io::Result<Line<'_>> {
        self.line.clear();
        let mut length: u64 = 0;
        let mut too_long = false;
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let content = &available[..newline.unwrap_or(available.len())];
            length += content.len() as u64;
            if !too_long && self.line.len() + content.len() > self.cap {
                too_long = true;
                // Give the memory back: the line is not kept.
                self.line = Vec::new();
            }
            if !too_long {
                self.line.extend_from_slice(content);
            }
            let consumed = newline.map_or(available.len(), |at| at + 1);
            self.read.consume(consumed);
            if newline.is_some() {
                return Ok(if too_long {
                    Line::TooLong(length)
                } else {
                    Line::Text(&self.line)
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` read with `cap` and a tiny read buffer (so lines
    /// span many reads), as owned values.
    async fn lines(input: &[u8], cap: usize) -> Vec<Result<Vec<u8>, u64>> {
        let mut lines = Lines {
            read: BufReader::with_capacity(3, input),
            line: Vec::new(),
            cap,
        };
        let mut out = Vec::new();
        loop {
            match lines.next().await.unwrap() {
                Line::Text(text) => out.push(Ok(text.to_vec())),
                Line::TooLong(length) => out.push(Err(length)),
                Line::End => return out,
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_and_discards_long_ones() {
        let got = lines(b"one\n\ntwo-long-line\nthree\nfour", 5).await;
        assert_eq!(
            got,
            [
                Ok(b"one".to_vec()),
                Ok(Vec::new()),
                Err(13),
                Ok(b"three".to_vec()),
            ]
        );
        // Exactly the cap is fine; one more byte is not.
        assert_eq!(
            lines(b"12345\n123456\n", 5).await,
            [Ok(b"12345".to_vec()), Err(6)]
        );
        // A long line cut off by the end of the stream is not reported.
        assert_eq!(lines(b"a\n1234567", 5).await, [Ok(b"a".to_vec())]);
    }

    #[tokio::test]
    async fn a_long_line_is_never_held() {
        // 4 MiB through a 1 KiB cap: the buffer never grows past the cap.
        let big = vec![b'x'; 4 << 20];
        let mut input = big.clone();
        input.extend_from_slice(b"\nok\n");
        let mut lines = Lines::new(&input[..], 1024);
        assert_eq!(lines.next().await.unwrap(), Line::TooLong(4 << 20));
        assert!(lines.line.capacity() <= 1024 + READ_BUFFER);
        assert_eq!(lines.next().await.unwrap(), Line::Text(b"ok"));
        assert_eq!(lines.next().await.unwrap(), Line::End);
    }
}
