//! A raw HTTP/1.x client: a request sent byte for byte, the answer read as received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// An answer as received.
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub status: u16,
    /// Header names lower-cased, values as received, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn first(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn all(&self, name: &str) -> Vec<String> {
        self.headers
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// The status line and headers of an answer from `reader`; `None` at end of stream.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<Option<Received>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    Ok(Some(Received {
        status,
        headers,
        body: Vec::new(),
    }))
}

/// Sends `raw` on a new connection and reads the answer to the end of the stream.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> std::io::Result<Received> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.write_all(raw)?;
    let mut reader = BufReader::new(stream);
    let mut r = read_head(&mut reader)?
        .ok_or_else(|| std::io::Error::other("connection closed without an answer"))?;
    reader.read_to_end(&mut r.body)?;
    Ok(r)
}

/// A keep-alive connection for many GETs in a row.
pub struct KeepAlive {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl KeepAlive {
    pub fn connect(addr: SocketAddr) -> std::io::Result<KeepAlive> {
        let s = TcpStream::connect(addr)?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        s.set_nodelay(true)?;
        Ok(KeepAlive {
            reader: BufReader::new(s.try_clone()?),
            writer: s,
        })
    }

    /// Sends `raw` (a request without a body) and reads one answer (`Content-Length` bodies).
    pub fn exchange(&mut self, raw: &[u8]) -> std::io::Result<Received> {
        self.writer.write_all(raw)?;
        let mut r = read_head(&mut self.reader)?
            .ok_or_else(|| std::io::Error::other("connection closed"))?;
        let length: usize = r
            .first("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        r.body = vec![0; length];
        self.reader.read_exact(&mut r.body)?;
        Ok(r)
    }
}
