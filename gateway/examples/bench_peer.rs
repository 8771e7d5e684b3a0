//! The other side of the gateway's benchmarks (`scripts/gateway-bench.sh`, BENCHMARKS.md §18):
//!
//! - `floor --listen ADDR --copy URL [--origin O]`: the HTTP floor of this machine. It asks URL once (the
//!   gateway's warm redirect) and then answers every request with that answer's status,
//!   headers and body from memory, through axum on the same multi-threaded tokio runtime the
//!   gateway runs on: what any Rust HTTP server must spend to send the same bytes.
//! - `resolve-many --server ADDR --handle H --concurrency C --seconds S`: the library's own
//!   `Resolver::resolve_many` with the gateway's resolver settings (single server, the
//!   resolver's cache off), H asked over and over for S seconds; prints resolutions/s.
//! - `get --url URL --n N [--origin O]`: N GETs one after another on one kept-alive
//!   connection (the load of the callgrind count, where wrk's time-bounded runs would not
//!   give an exact number of requests); fails unless every answer has the first's status.
//!
//! Loopback only: every address is checked to be a loopback one.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, StatusCode};
use axum::response::Response;
use clap::{Parser, Subcommand};
use handle_resolver::transport::addr::Endpoint;
use handle_resolver::Resolver;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a copy of one answer from memory.
    Floor {
        #[arg(long)]
        listen: SocketAddr,
        /// The URL whose answer is copied (asked once, at start).
        #[arg(long)]
        copy: String,
        /// An `Origin` header for that request (the answer's CORS headers are copied too).
        #[arg(long)]
        origin: Option<String>,
    },
    /// `Resolver::resolve_many` against one server for a while.
    ResolveMany {
        #[arg(long)]
        server: SocketAddr,
        #[arg(long)]
        handle: String,
        #[arg(long)]
        concurrency: usize,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
    },
    /// N GETs in turn on one connection.
    Get {
        #[arg(long)]
        url: String,
        #[arg(long)]
        n: usize,
        /// An `Origin` header (the CORS headers of the answer).
        #[arg(long)]
        origin: Option<String>,
    },
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(async {
        match args.command {
            Command::Floor {
                listen,
                copy,
                origin,
            } => floor(listen, &copy, origin.as_deref()).await,
            Command::ResolveMany {
                server,
                handle,
                concurrency,
                seconds,
            } => resolve_many(server, &handle, concurrency, seconds).await,
            Command::Get { url, n, origin } => get(&url, n, origin.as_deref()).await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Refuses anything but loopback (the project's network rule).
fn loopback(addr: SocketAddr) -> Result<SocketAddr, BoxError> {
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(format!("{addr}: benchmarks send traffic to loopback only").into())
    }
}

/// The URL's `http://` authority, checked to be a loopback address.
fn loopback_url(url: &str) -> Result<axum::http::Uri, BoxError> {
    let uri: axum::http::Uri = url.parse()?;
    let authority = uri
        .authority()
        .ok_or_else(|| format!("{url}: no host"))?
        .as_str()
        .parse::<SocketAddr>()
        .map_err(|_| format!("{url}: expected http://IP:PORT/..."))?;
    loopback(authority)?;
    Ok(uri)
}

/// A GET of `url` (a loopback one), with `Origin` when given.
fn get_request(url: &str, origin: Option<&str>) -> Result<Request<Body>, BoxError> {
    let mut request = Request::get(loopback_url(url)?);
    if let Some(origin) = origin {
        request = request.header("origin", HeaderValue::from_str(origin)?);
    }
    Ok(request.body(Body::empty())?)
}

fn client() -> Client<HttpConnector, Body> {
    Client::builder(TokioExecutor::new()).build(HttpConnector::new())
}

/// Headers hyper writes itself (or that belong to one connection): not copied.
fn copied(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "date" | "content-length" | "connection" | "transfer-encoding" | "keep-alive"
    )
}

async fn floor(listen: SocketAddr, copy: &str, origin: Option<&str>) -> Result<(), BoxError> {
    let listen = loopback(listen)?;
    let answer = client().request(get_request(copy, origin)?).await?;
    let status: StatusCode = answer.status();
    let mut headers = HeaderMap::new();
    for (name, value) in answer.headers() {
        if copied(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    let body = axum::body::to_bytes(Body::new(answer.into_body()), 1 << 20).await?;
    let serve = move |_: Request<Body>| {
        let (headers, body) = (headers.clone(), body.clone());
        async move {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
    };
    let app = axum::Router::new().fallback(serve);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

async fn resolve_many(
    server: SocketAddr,
    handle: &str,
    concurrency: usize,
    seconds: f64,
) -> Result<(), BoxError> {
    let server = loopback(server)?;
    // The gateway's resolver (gateway/src/upstream/mod.rs): one server, no answer cache.
    let resolver = Resolver::builder()
        .cache_size(0)
        .server_at(&Endpoint::parse(&server.to_string())?)
        .build()?;
    let window = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let ids = std::iter::repeat(handle.to_string());
    let mut results = resolver.resolve_many(ids, concurrency);
    let (mut done, mut failed) = (0u64, 0u64);
    while let Some((_, outcome)) = results.next().await {
        match outcome {
            Ok(_) => done += 1,
            Err(_) => failed += 1,
        }
        if started.elapsed() >= window {
            break;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "resolve_many c={concurrency}: {done} resolutions in {secs:.2} s = {:.0}/s, {failed} failed",
        done as f64 / secs
    );
    if failed > 0 {
        return Err(format!("{failed} resolutions failed").into());
    }
    Ok(())
}

async fn get(url: &str, n: usize, origin: Option<&str>) -> Result<(), BoxError> {
    loopback_url(url)?;
    let client = client();
    let mut first = None;
    for i in 0..n {
        let answer = client.request(get_request(url, origin)?).await?;
        let status = answer.status();
        axum::body::to_bytes(Body::new(answer.into_body()), 1 << 20).await?;
        match first {
            None => first = Some(status),
            Some(s) if s != status => {
                return Err(format!("request {i}: {status}, the first was {s}").into())
            }
            Some(_) => {}
        }
    }
    println!("{n} requests, each {}", first.unwrap_or(StatusCode::OK));
    Ok(())
}
