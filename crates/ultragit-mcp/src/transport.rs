//! The stdio transport under rmcp: a reader task that frames lines
//! ([`crate::framing`]), judges each one ([`crate::jsonrpc`]), hands the
//! messages to rmcp and answers the rest itself; one [`Writer`] that both use,
//! so lines never interleave; and the [`Stop`] the reader fires when the
//! client closes its end, which ends the session and cancels calls that have
//! not started.
//!
//! **Invariant:** everything written is one JSON-RPC message per line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, mpsc, watch};

use crate::LogSink;
use crate::framing::{Line, Lines, MAX_LINE};
use crate::jsonrpc::{ErrorReply, Judge, Judged};

/// The code of the reply to a call cancelled before it started because the
/// client went away (LSP's `RequestCancelled`). Such a reply is never
/// written: nobody is left to read it.
pub(crate) const CANCELLED: ErrorCode = ErrorCode(-32800);

/// How many judged messages wait for rmcp to take them.
const QUEUE: usize = 64;

/// Fired once, when the client closes its end of the session (or the
/// session ends otherwise); cheap to check from any thread.
#[derive(Debug, Clone)]
pub(crate) struct Stop(Arc<watch::Sender<bool>>);

impl Stop {
    pub(crate) fn new() -> Stop {
        Stop(Arc::new(watch::channel(false).0))
    }

    /// Fires it (again is harmless).
    pub(crate) fn fire(&self) {
        self.0.send_replace(true);
    }

    /// Whether it has fired.
    pub(crate) fn fired(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once it has fired.
    pub(crate) async fn wait(&self) {
        let mut fired = self.0.subscribe();
        // The sender lives in `self`, so this only returns once it has fired.
        let _ = fired.wait_for(|fired| *fired).await;
    }
}

/// The one writer of the session's output: whole lines, flushed, one at a time.
pub(crate) struct Writer<W>(Arc<Mutex<W>>);

impl<W> Clone for Writer<W> {
    fn clone(&self) -> Self {
        Writer(Arc::clone(&self.0))
    }
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    pub(crate) fn new(write: W) -> Writer<W> {
        Writer(Arc::new(Mutex::new(write)))
    }

    /// Writes `message` (rmcp's): an error without an id gets `"id": null`,
    /// and the reply of a cancelled call is dropped.
    pub(crate) async fn message(&self, message: ServerJsonRpcMessage) -> std::io::Result<()> {
        match message {
            JsonRpcMessage::Error(error) if error.error.code == CANCELLED => Ok(()),
            JsonRpcMessage::Error(error) if error.id.is_none() => {
                self.reply(&ErrorReply::of(error.error, None)).await
            }
            message => self.line(&message).await,
        }
    }

    /// Writes one of our own error replies.
    pub(crate) async fn reply(&self, reply: &ErrorReply) -> std::io::Result<()> {
        self.line(reply).await
    }

    async fn line(&self, message: &impl serde::Serialize) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut write = self.0.lock().await;
        write.write_all(&line).await?;
        write.flush().await
    }
}

/// rmcp's side of the transport: the judged messages in, [`Writer`] out.
pub(crate) struct LineTransport<W> {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Writer<W>,
    stop: Stop,
    /// Counts the requests read but dropped unstarted.
    dropped: Arc<AtomicUsize>,
}

/// The transport over `read` and `write`, and the reader task to spawn. The
/// task fires `stop` when `read` ends; requests read but not yet taken by
/// rmcp then are dropped and counted in `dropped`.
pub(crate) fn line_transport<R, W>(
    read: R,
    write: W,
    stop: Stop,
    dropped: Arc<AtomicUsize>,
    log: LogSink,
) -> (LineTransport<W>, impl Future<Output = ()> + Send + 'static)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (send, incoming) = mpsc::channel(QUEUE);
    let writer = Writer::new(write);
    let reader = read_lines(read, send, writer.clone(), stop.clone(), log);
    let transport = LineTransport {
        incoming,
        writer,
        stop,
        dropped,
    };
    (transport, reader)
}

/// Reads, judges and forwards lines until `read` ends or rmcp is gone, then
/// fires `stop`.
async fn read_lines<R, W>(
    read: R,
    forward: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Writer<W>,
    stop: Stop,
    log: LogSink,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = Lines::new(read, MAX_LINE);
    let mut judge = Judge::default();
    loop {
        let judged = match lines.next().await {
            Ok(Line::Text(line)) => judge.line(line),
            Ok(Line::TooLong(length)) => Judged::Reject(ErrorReply::parse_error(format_args!(
                "the message is {length} bytes, over the {MAX_LINE}-byte ({} MiB) line cap; it was discarded unread",
                MAX_LINE >> 20
            ))),
            Ok(Line::End) => {
                log("stdin closed");
                break;
            }
            Err(err) => {
                log(&format!("cannot read stdin: {err}"));
                break;
            }
        };
        match judged {
            Judged::Message(message) => {
                if forward.send(*message).await.is_err() {
                    break;
                }
            }
            Judged::Reject(reply) => {
                let error = reply.error();
                log(&format!(
                    "refused a message ({}): {}",
                    error.code.0, error.message
                ));
                if writer.reply(&reply).await.is_err() {
                    break;
                }
            }
            Judged::Ignore(what) => log(&format!("ignored {what}")),
        }
    }
    stop.fire();
}

impl<W> LineTransport<W> {
    /// Drops what was read but not taken, counting the requests.
    fn drop_unread(&mut self) {
        self.incoming.close();
        while let Ok(message) = self.incoming.try_recv() {
            if matches!(message, JsonRpcMessage::Request(_)) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl<W: AsyncWrite + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move { writer.message(item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        // Once the client has gone, messages read but not yet taken are
        // calls that never started: they are dropped with the channel.
        tokio::select! {
            biased;
            () = self.stop.wait() => {
                self.drop_unread();
                None
            }
            message = self.incoming.recv() => message,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.0.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn answers_what_it_refuses_and_stops_at_the_end() {
        let input = concat!(
            "{bad\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            "\n",
        );
        let (write, read_back) = tokio::io::duplex(1 << 16);
        let stop = Stop::new();
        let dropped = Arc::new(AtomicUsize::new(0));
        let (mut transport, reader) = line_transport(
            input.as_bytes(),
            write,
            stop.clone(),
            Arc::clone(&dropped),
            Arc::new(|_: &str| {}),
        );
        reader.await;
        assert!(stop.fired());
        // The ping was read before the end but not taken: dropped with the end.
        assert!(transport.receive().await.is_none());
        assert_eq!(dropped.load(Ordering::Relaxed), 1);
        drop(transport);

        let mut replies = BufReader::new(read_back).lines();
        let mut got = Vec::new();
        while let Some(line) = replies.next_line().await.unwrap() {
            got.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0]["error"]["code"], -32700);
        assert_eq!(got[0]["id"], Value::Null);
        assert_eq!(got[1]["error"]["code"], -32600);
        assert_eq!(got[1]["id"], 1);
    }

    #[tokio::test]
    async fn writes_null_ids_and_drops_cancelled_replies() {
        let (write, read_back) = tokio::io::duplex(1 << 16);
        let writer = Writer::new(write);
        let error = |code, id| {
            ServerJsonRpcMessage::error(rmcp::model::ErrorData::new(code, "m", None), id)
        };
        writer
            .message(error(CANCELLED, Some(rmcp::model::RequestId::Number(1))))
            .await
            .unwrap();
        writer
            .message(error(ErrorCode::INVALID_REQUEST, None))
            .await
            .unwrap();
        drop(writer);
        let mut replies = BufReader::new(read_back).lines();
        let line = replies.next_line().await.unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&line).unwrap(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "m"}})
        );
        assert!(replies.next_line().await.unwrap().is_none());
    }
}
