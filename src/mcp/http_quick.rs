//! A quick answer in one write: the head of a `POST /mcp` reply waits (at most
//! [`HEAD_WAIT`]) for the reply's first message, so that a call answered within it goes out
//! as one write — head, rmcp's priming event and the message together, with a
//! `Content-Length` when that is the whole reply — instead of the head and priming event at
//! once and the message after them.
//!
//! rmcp answers every call of a session as a stream of server-sent events; its head and
//! priming event are ready before the tool has run, and hyper writes them the moment they
//! are, so each call cost the server two TCP sends and the client two wake-ups (issue 32:
//! fifty HTTP clients at once, where every packet is a turn of the scheduler on two cores).
//! A call that takes longer than [`HEAD_WAIT`] has its head (and priming event) sent then,
//! and streams as before: an HTTP client that times its wait for a head (a read timeout)
//! sees one within it, and rmcp's keep-alive comments follow every 15 s as before.
//!
//! Only the timing of bytes changes: the events, their order and the head's fields are the
//! same (a stream that has ended by then gets a length instead of chunks).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Body as _, Frame, SizeHint};

/// The longest a reply's head waits for its first event.
pub const HEAD_WAIT: Duration = Duration::from_secs(1);

/// Holds a `POST` reply's head until its first event is ready (at most [`HEAD_WAIT`]).
pub async fn head_with_first_event(request: Request, next: Next) -> Response {
    let post = request.method() == Method::POST;
    let response = next.run(request).await;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
    if !post || !streams {
        return response;
    }
    let (mut head, mut body) = response.into_parts();
    let deadline = tokio::time::Instant::now() + HEAD_WAIT;
    let mut ahead = VecDeque::new();
    let mut ended = false;
    // Up to the first message: rmcp's priming event (no data) comes at once, before it.
    loop {
        let Ok(frame) = tokio::time::timeout_at(deadline, next_frame(&mut body)).await else {
            // A long call: its head goes now, its events when they come.
            return Response::from_parts(head, Body::new(Prefixed { ahead, rest: body }));
        };
        let Some(frame) = frame else {
            ended = true;
            break;
        };
        let message = carries_a_message(&frame);
        ahead.push_back(frame);
        if message {
            break;
        }
    }
    // What else is ready now: the end, typically, right after a call's one answer — or a
    // moment later, when rmcp closes the stream on another thread than the one it is read
    // on (one turn of this task's is waited for it).
    for turn in 0..2 {
        if turn == 1 && !ended && !body.is_end_stream() {
            tokio::task::yield_now().await;
        }
        let mut cx = Context::from_waker(std::task::Waker::noop());
        while !ended && !body.is_end_stream() {
            match Pin::new(&mut body).poll_frame(&mut cx) {
                Poll::Ready(Some(frame)) => ahead.push_back(frame),
                Poll::Ready(None) => ended = true,
                Poll::Pending => break,
            }
        }
    }
    if ended || body.is_end_stream() {
        let whole: Option<Vec<Bytes>> = ahead
            .iter()
            .map(|frame| frame.as_ref().ok()?.data_ref().cloned())
            .collect();
        if let Some(whole) = whole {
            // The whole reply is here: one write, with its length.
            head.headers.remove(header::TRANSFER_ENCODING);
            return Response::from_parts(head, Body::from(whole.concat()));
        }
    }
    Response::from_parts(head, Body::new(Prefixed { ahead, rest: body }))
}

/// Whether a frame holds a JSON-RPC message: an event with data (rmcp's priming event has
/// none, a keep-alive is a comment).
fn carries_a_message(frame: &Result<Frame<Bytes>, axum::Error>) -> bool {
    let Some(data) = frame.as_ref().ok().and_then(Frame::data_ref) else {
        // An error or trailers: nothing more to wait for.
        return true;
    };
    data.split(|&byte| byte == b'\n').any(|line| {
        line.strip_prefix(b"data:")
            .is_some_and(|rest| !rest.trim_ascii().is_empty())
    })
}

/// The next frame of `body`.
async fn next_frame(body: &mut Body) -> Option<Result<Frame<Bytes>, axum::Error>> {
    std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await
}

/// A body whose first frames were taken out to look at, then put back in front.
struct Prefixed {
    ahead: VecDeque<Result<Frame<Bytes>, axum::Error>>,
    rest: Body,
}

impl hyper::body::Body for Prefixed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(frame) = self.ahead.pop_front() {
            return Poll::Ready(Some(frame));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.ahead.is_empty() && self.rest.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let ahead: u64 = self
            .ahead
            .iter()
            .filter_map(|frame| frame.as_ref().ok()?.data_ref())
            .map(|data| data.len() as u64)
            .sum();
        let rest = self.rest.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(rest.lower() + ahead);
        if let Some(upper) = rest.upper() {
            hint.set_upper(upper + ahead);
        }
        hint
    }
}
