//! A scripted [`Exchange`] for resolver tests on tokio's paused clock: per-address handlers,
//! a log of every request, an in-flight counter (to show that losers are cancelled).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use handle_resolver::server_record;
use handle_resolver::testing::{Lookup, Store, TestKey};
use handle_resolver::transport::{
    Exchange, ExchangeOptions, Exchanged, TransportError, TransportKind,
};
use handle_resolver::wire::decode_values;
use handle_resolver::wire::Credential;
use handle_resolver::wire::{
    signed_data, Body, ErrorBody, HandleValue, HashOption, Limits, Message, OpFlags,
    ProtocolVersion, Reader, ReferralBody, ResolutionResponse, ResponseCode, SiteInfo,
};

/// What a scripted server does with one request.
pub enum Reply {
    /// Answer after the default RTT.
    Answer(Message),
    /// Answer after this long.
    After(Duration, Message),
    /// Never answer: the exchange times out like the real transport would.
    Silent,
    /// Fail at once.
    Fail(TransportError),
}

/// A scripted server.
pub type Handler = Arc<dyn Fn(&Message, TransportKind) -> Reply + Send + Sync>;

/// One request the resolver sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub to: SocketAddr,
    pub kind: TransportKind,
    pub request: Message,
}

/// The scripted network.
#[derive(Default)]
pub struct MockNet {
    handlers: Mutex<HashMap<SocketAddr, Handler>>,
    log: Mutex<Vec<Sent>>,
    in_flight: Arc<AtomicUsize>,
}

/// Default answer time of a scripted server.
pub const RTT: Duration = Duration::from_millis(2);

impl MockNet {
    pub fn new() -> Arc<MockNet> {
        Arc::new(MockNet::default())
    }

    /// Installs (or replaces) the handler of `addr`.
    pub fn serve(&self, addr: SocketAddr, handler: Handler) {
        self.handlers.lock().unwrap().insert(addr, handler);
    }

    /// Every request sent so far.
    pub fn log(&self) -> Vec<Sent> {
        self.log.lock().unwrap().clone()
    }

    /// Requests sent to `addr`.
    pub fn count_to(&self, addr: SocketAddr) -> usize {
        self.log().iter().filter(|s| s.to == addr).count()
    }

    /// Requests sent in all.
    pub fn total(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Exchanges still running.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }
}

struct InFlight(Arc<AtomicUsize>);
impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Exchange for MockNet {
    /// Transmissions as the real transport would count them: over UDP, every retransmission
    /// of the schedule sent before the scripted answer time.
    fn exchange<'a>(
        &'a self,
        server: SocketAddr,
        kind: TransportKind,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        Box::pin(async move {
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            let _guard = InFlight(self.in_flight.clone());
            self.log.lock().unwrap().push(Sent {
                to: server,
                kind,
                request: request.clone(),
            });
            let handler = self.handlers.lock().unwrap().get(&server).cloned();
            let reply = match handler {
                Some(h) => h(request, kind),
                None => Reply::Silent,
            };
            let answered = |m: Message, after: Duration| {
                let transmissions = match kind {
                    TransportKind::Udp => {
                        let mut sent_at = Duration::ZERO;
                        let mut n = 0;
                        for wait in &options.udp_retransmit {
                            if sent_at >= after {
                                break;
                            }
                            n += 1;
                            sent_at += *wait;
                        }
                        n.max(1)
                    }
                    _ => 1,
                };
                Ok(Exchanged::new(
                    Message::decode(m.encode().unwrap(), &Limits::default()).unwrap(),
                    transmissions,
                ))
            };
            match reply {
                Reply::Answer(m) => {
                    tokio::time::sleep(RTT).await;
                    answered(m, RTT)
                }
                Reply::After(d, m) => {
                    tokio::time::sleep(d).await;
                    answered(m, d)
                }
                Reply::Silent => {
                    let wait = match kind {
                        TransportKind::Udp => options.udp_retransmit.iter().sum(),
                        _ => options.tcp_read_timeout,
                    };
                    tokio::time::sleep(wait).await;
                    Err(TransportError::Timeout)
                }
                Reply::Fail(e) => Err(e),
            }
        })
    }
}

/// `127.0.0.<n>:2641`.
pub fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, n], 2641))
}

/// A site of servers at `addrs` (UDP + TCP on each port), hash by handle.
pub fn site(addrs: &[SocketAddr], primary: bool, desc: &str, key: Option<&TestKey>) -> SiteInfo {
    SiteInfo {
        data_format_version: 1,
        protocol_version: ProtocolVersion::V2_11,
        serial: 7,
        primary,
        multi_primary: false,
        primary_mask: if primary { 0x80 } else { 0 },
        hash_option: HashOption::ByHandle,
        hash_filter: Bytes::new(),
        attributes: vec![(Bytes::from_static(b"desc"), Bytes::from(desc.to_string()))],
        servers: addrs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let k = key.map(TestKey::hs_pubkey).unwrap_or_default();
                server_record(i as u32 + 1, a.ip(), k, a.port().into(), a.port().into())
            })
            .collect(),
    }
}

/// An HS_SITE value.
pub fn site_value(index: u32, info: &SiteInfo) -> HandleValue {
    HandleValue::new(index, "HS_SITE", info.encode().unwrap())
}

/// The handle of a resolution request.
pub fn handle_of(m: &Message) -> String {
    match &m.body {
        Body::ResolutionRequest(r) => String::from_utf8_lossy(&r.handle).into_owned(),
        _ => String::new(),
    }
}

/// An answer with values.
pub fn values_answer(req: &Message, values: Vec<HandleValue>) -> Message {
    let handle = match &req.body {
        Body::ResolutionRequest(r) => r.handle.clone(),
        _ => Bytes::new(),
    };
    Message::response_to(
        req,
        ResponseCode::Success,
        Body::ResolutionResponse(ResolutionResponse { handle, values }),
    )
}

/// An error answer.
pub fn error_answer(req: &Message, code: ResponseCode) -> Message {
    Message::response_to(req, code, Body::Error(ErrorBody::new(&b"scripted"[..])))
}

/// A referral answer.
pub fn referral_answer(
    req: &Message,
    code: ResponseCode,
    handle: &str,
    values: Option<Vec<HandleValue>>,
) -> Message {
    Message::response_to(
        req,
        code,
        Body::Referral(ReferralBody {
            referral_handle: Bytes::from(handle.to_string()),
            values,
        }),
    )
}

/// Signs `m` with `key` like a server answering a CT request.
pub fn sign(mut m: Message, key: &TestKey) -> Message {
    m.header.flags = m.header.flags | OpFlags::CT;
    let hb = m.header_and_body().unwrap();
    let data = signed_data(
        m.envelope.version,
        m.envelope.suggested,
        m.envelope.session_id,
        m.envelope.request_id,
        0,
        &hb,
    );
    m.credential = Some(Box::new(Credential::new(
        &b"HS_SIGNED"[..],
        &b"SHA-256"[..],
        key.sign(&data).unwrap(),
        0,
    )));
    m
}

/// A handler answering from `store` like server `index` of `site` (301 when the hash picks
/// another server of a multi-server site); signs when asked and a key is given.
pub fn store_server(
    store: Arc<Store>,
    site: Option<(SiteInfo, usize)>,
    key: Option<TestKey>,
) -> Handler {
    Arc::new(move |req, _kind| {
        let Body::ResolutionRequest(r) = &req.body else {
            return Reply::Answer(error_answer(req, ResponseCode::ProtocolError));
        };
        if let Some((info, index)) = &site {
            if info.servers.len() > 1 && info.server_index_for(&r.handle) != Some(*index) {
                return Reply::Answer(error_answer(req, ResponseCode::ServerNotResponsible));
            }
        }
        let po = req.header.flags.contains(OpFlags::PO);
        let answer = match store.lookup(&r.handle, &r.indexes, &r.types, po) {
            Lookup::AllPublic(h) => values_answer(
                req,
                h.values
                    .iter()
                    .filter(|v| v.permissions.public_read())
                    .cloned()
                    .collect(),
            ),
            Lookup::Selected(bytes) => {
                let values =
                    decode_values(&mut Reader::new(bytes), "values", &Limits::default()).unwrap();
                values_answer(req, values)
            }
            Lookup::NotFound => error_answer(req, ResponseCode::HandleNotFound),
            Lookup::NoValues => error_answer(req, ResponseCode::ValuesNotFound),
            Lookup::NotHomed => error_answer(req, ResponseCode::ServerNotResponsible),
            Lookup::AuthenticationNeeded => error_answer(req, ResponseCode::AuthenticationNeeded),
            Lookup::Referral(rf) => Message::response_to(req, rf.code, Body::Referral(rf.body)),
            Lookup::Raw(bytes) => {
                let mut m = Message::decode(bytes, &Limits::default()).unwrap();
                m.envelope.request_id = req.request_id();
                m.header.expiration = req.header.expiration;
                m
            }
        };
        match (&key, req.header.flags.contains(OpFlags::CT)) {
            (Some(k), true) => Reply::Answer(sign(answer, k)),
            _ => Reply::Answer(answer),
        }
    })
}
