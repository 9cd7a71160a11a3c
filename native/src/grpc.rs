//! The OTLP/gRPC server: tonic (the ecosystem's gRPC server, on hyper and tokio) on a thread of
//! its own, handing each Export call's request bytes to Python and its reply back.
//!
//! Why not grpcio's asyncio server: on a 2-core machine it spent ~530 µs of CPU on an empty
//! unary call (Cython coroutines, and a poller thread waking the event loop for each of a call's
//! operations), several times the decoding of the call's 100 spans. tonic spends ~90 µs.
//!
//! The hand-off: a call is queued here and the event loop is woken by one byte on a pipe (only
//! when it is not already due to look); the loop takes every queued call at once
//! (`GrpcServer::take`), serves each, and answers through the call (`respond` or `fail`).
//! No GIL is taken on the server's thread.

use std::future::Future;
use std::io::Write;
use std::marker::PhantomData;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tokio::sync::{oneshot, watch};
use tonic::codec::{Codec, CompressionEncoding, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::{Code, Status};

/// Request and response bodies pass as bytes: Python decodes them (with every check the
/// decoder makes) and serialises the reply.
#[derive(Clone, Copy)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let len = src.remaining();
        Ok(Some(src.copy_to_bytes(len)))
    }
}

/// A call waiting for Python.
struct Pending {
    signal: &'static str,
    body: Bytes,
    authorization: Option<String>,
    reply: oneshot::Sender<Result<Bytes, Status>>,
}

/// What the server's thread and Python share: the queue and the wake-up pipe.
struct Queue {
    calls: Mutex<Vec<Pending>>,
    woken: AtomicBool, // a byte is on the pipe, or Python is taking: no need for another
    wake: std::io::PipeWriter,
}

impl Queue {
    fn push(&self, call: Pending) {
        self.calls.lock().unwrap().push(call);
        if !self.woken.swap(true, Ordering::AcqRel) {
            // One byte on an empty pipe cannot block; a failure would only leave the call to
            // the next wake-up, so it is not fatal.
            let _ = (&self.wake).write(&[0]);
        }
    }
}

trait Service: Send + Sync + 'static {
    const NAME: &'static str;
    const SIGNAL: &'static str;
}

struct Traces;
impl Service for Traces {
    const NAME: &'static str = "opentelemetry.proto.collector.trace.v1.TraceService";
    const SIGNAL: &'static str = "traces";
}

struct Logs;
impl Service for Logs {
    const NAME: &'static str = "opentelemetry.proto.collector.logs.v1.LogsService";
    const SIGNAL: &'static str = "logs";
}

/// One OTLP service (its only method is Export).
struct Otlp<S> {
    queue: Arc<Queue>,
    max_message_bytes: usize,
    service: PhantomData<fn() -> S>,
}

impl<S> Otlp<S> {
    fn new(queue: &Arc<Queue>, max_message_bytes: usize) -> Self {
        Otlp { queue: queue.clone(), max_message_bytes, service: PhantomData }
    }
}

impl<S> Clone for Otlp<S> {
    fn clone(&self) -> Self {
        Otlp::new(&self.queue, self.max_message_bytes)
    }
}

impl<S: Service> NamedService for Otlp<S> {
    const NAME: &'static str = S::NAME;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S: Service> tower::Service<http::Request<tonic::body::Body>> for Otlp<S> {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let export = Export::<S> { queue: self.queue.clone(), service: PhantomData };
        let limit = self.max_message_bytes;
        Box::pin(async move {
            if request.uri().path().rsplit('/').next() != Some("Export") {
                return Ok(Status::unimplemented("").into_http());
            }
            let mut grpc = Grpc::new(RawCodec)
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(limit)
                .max_encoding_message_size(usize::MAX);
            let response = grpc.unary(export, request).await;
            Ok(over_limit_as_resource_exhausted(response))
        })
    }
}

/// tonic answers a message over the size limit with OUT_OF_RANGE, a code OTLP exporters retry;
/// the request would fail again, so it is RESOURCE_EXHAUSTED without RetryInfo (not retried),
/// as grpc-core answers it. Only tonic's limit gives OUT_OF_RANGE here: Python never does.
fn over_limit_as_resource_exhausted(
    response: http::Response<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    match Status::from_header_map(response.headers()) {
        Some(status) if status.code() == Code::OutOfRange => {
            Status::resource_exhausted(status.message().to_owned()).into_http()
        }
        _ => response,
    }
}

struct Export<S> {
    queue: Arc<Queue>,
    service: PhantomData<fn() -> S>,
}

impl<S: Service> UnaryService<Bytes> for Export<S> {
    type Response = Bytes;
    type Future = BoxFuture<Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let authorization =
            request.metadata().get("authorization").and_then(|value| value.to_str().ok()).map(str::to_owned);
        let (reply, answer) = oneshot::channel();
        self.queue.push(Pending { signal: S::SIGNAL, body: request.into_inner(), authorization, reply });
        Box::pin(async move {
            match answer.await {
                Ok(result) => result.map(tonic::Response::new),
                // Python dropped the call unanswered (a bug it logs, or the sidecar stopping)
                Err(_) => Err(Status::internal("internal error")),
            }
        })
    }
}

/// An Export call, for Python to serve: `signal`, `body`, `authorization`, then `respond` or
/// `fail` once (a call dropped unanswered is answered INTERNAL).
#[pyclass(module = "monitor._native", frozen)]
pub struct GrpcCall {
    #[pyo3(get)]
    signal: &'static str,
    #[pyo3(get)]
    body: Py<PyBytes>,
    #[pyo3(get)]
    authorization: Option<String>,
    reply: Mutex<Option<oneshot::Sender<Result<Bytes, Status>>>>,
}

impl GrpcCall {
    fn answer(&self, result: Result<Bytes, Status>) -> PyResult<()> {
        let reply = self
            .reply
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this gRPC call was already answered"))?;
        let _ = reply.send(result); // the client gone, or the server stopped: nobody to tell
        Ok(())
    }
}

#[pymethods]
impl GrpcCall {
    /// Answer OK with the serialised response message.
    fn respond(&self, message: &[u8]) -> PyResult<()> {
        self.answer(Ok(Bytes::copy_from_slice(message)))
    }

    /// Answer with a gRPC status code, its message, and (for google.rpc.Status details, e.g. a
    /// RetryInfo) the serialised google.rpc.Status sent as grpc-status-details-bin.
    #[pyo3(signature = (code, message, details=None))]
    fn fail(&self, code: i32, message: &str, details: Option<&[u8]>) -> PyResult<()> {
        let code = Code::from_i32(code);
        let status = match details {
            Some(details) => Status::with_details(code, message, Bytes::copy_from_slice(details)),
            None => Status::new(code, message),
        };
        self.answer(Err(status))
    }
}

/// The server: bound when made, serving on its own thread until `stop`. Frozen (no borrow
/// flag): the loop takes calls while another thread waits in `stop`.
#[pyclass(module = "monitor._native", frozen)]
pub struct GrpcServer {
    queue: Arc<Queue>,
    wake: std::io::PipeReader,
    #[pyo3(get)]
    port: u16,
    stopping: watch::Sender<Option<Duration>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[pymethods]
impl GrpcServer {
    /// Bind `endpoint` (host:port; port 0 picks one) and start serving TraceService/Export and
    /// LogsService/Export. `tls`: (certificate chain PEM, private key PEM).
    #[new]
    #[pyo3(signature = (endpoint, max_message_bytes, tls=None))]
    fn new(endpoint: &str, max_message_bytes: usize, tls: Option<(Vec<u8>, Vec<u8>)>) -> PyResult<Self> {
        // As an OSError with its errno, as Python's own servers raise it (the CLI names the port).
        let listener = bind(endpoint).map_err(|err| {
            let reason = std::io::Error::from(err.kind()); // its text, without "(os error N)"
            let message = format!("error while attempting to bind on {endpoint}: {reason}");
            PyOSError::new_err((err.raw_os_error().unwrap_or(0), message))
        })?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let mut builder = tonic::transport::Server::builder()
            .tcp_nodelay(true)
            // A 100-span request is ~80 KB: windows that hold several, so a request is not
            // held up waiting for WINDOW_UPDATEs (grpc-core probes the bandwidth instead).
            .initial_stream_window_size(Some(4 << 20))
            .initial_connection_window_size(Some(16 << 20));
        if let Some((cert, key)) = tls {
            let identity = tonic::transport::Identity::from_pem(cert, key);
            builder = builder
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .map_err(|err| PyOSError::new_err(format!("TLS for {endpoint}: {err}")))?;
        }
        let (wake, wake_writer) = std::io::pipe()?;
        // `take` reads the wake-up bytes without blocking, whenever it is called.
        // SAFETY: fcntl on a descriptor this function owns.
        if unsafe { libc::fcntl(wake.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) } == -1 {
            return Err(std::io::Error::last_os_error().into());
        }
        let queue = Arc::new(Queue {
            calls: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            wake: wake_writer,
        });
        let router =
            builder
                .add_service(Otlp::<Traces>::new(&queue, max_message_bytes))
                .add_service(Otlp::<Logs>::new(&queue, max_message_bytes));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let incoming = {
            let _runtime = runtime.enter();
            tonic::transport::server::TcpIncoming::from(tokio::net::TcpListener::from_std(listener)?)
        };
        let (stopping, stop_signal) = watch::channel(None::<Duration>);
        let thread = std::thread::Builder::new().name("otlp-grpc".into()).spawn(move || {
            runtime.block_on(async move {
                let mut grace = stop_signal.clone();
                let mut signal = stop_signal;
                let serve = router.serve_with_incoming_shutdown(incoming, async move {
                    let _ = signal.wait_for(Option::is_some).await;
                });
                // Stopping: no new calls; those in flight get the grace period to finish.
                let grace_over = async move {
                    let Ok(limit) = grace.wait_for(Option::is_some).await.map(|d| d.unwrap()) else { return };
                    tokio::time::sleep(limit).await;
                };
                tokio::select! {
                    _ = serve => {}
                    _ = grace_over => {}
                }
            });
            // Dropping the runtime drops what is still in flight: those calls' clients see
            // their connection close, and retry.
        })?;
        Ok(GrpcServer { queue, wake, port, stopping, thread: Mutex::new(Some(thread)) })
    }

    /// The pipe's read end: readable when calls are waiting (for the event loop's add_reader).
    #[getter]
    fn wake_fd(&self) -> i32 {
        self.wake.as_raw_fd()
    }

    /// Every call waiting, oldest first (the wake-up bytes read first).
    fn take(&self, py: Python<'_>) -> PyResult<Vec<GrpcCall>> {
        let mut buf = [0u8; 64];
        let _ = std::io::Read::read(&mut &self.wake, &mut buf);
        self.queue.woken.store(false, Ordering::Release);
        let calls = std::mem::take(&mut *self.queue.calls.lock().unwrap());
        Ok(calls
            .into_iter()
            .map(|call| GrpcCall {
                signal: call.signal,
                body: PyBytes::new(py, &call.body).unbind(),
                authorization: call.authorization,
                reply: Mutex::new(Some(call.reply)),
            })
            .collect())
    }

    /// Stop taking calls, let those in flight finish for up to `grace_s`, and end the thread.
    /// Blocks (without the GIL): call it from a worker thread while the loop serves calls.
    fn stop(&self, py: Python<'_>, grace_s: f64) {
        let _ = self.stopping.send(Some(Duration::from_secs_f64(grace_s.max(0.0))));
        let thread = self.thread.lock().unwrap().take();
        if let Some(thread) = thread {
            py.allow_threads(|| {
                let _ = thread.join();
            });
        }
    }
}

impl Drop for GrpcServer {
    /// Never stopped (a start that failed after binding): the thread ends, and the port is freed.
    fn drop(&mut self) {
        let _ = self.stopping.send(Some(Duration::ZERO));
    }
}

fn bind(endpoint: &str) -> std::io::Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let mut addresses: Vec<_> = endpoint.to_socket_addrs()?.collect();
    addresses.sort_by_key(|address| !address.is_ipv4()); // localhost: 127.0.0.1 first
    std::net::TcpListener::bind(&addresses[..])
}
