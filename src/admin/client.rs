//! [`Admin`]: creating, changing, deleting and listing handles, as the reference library
//! does: each request goes to a primary site of the handle's prefix (found as a resolution
//! finds its sites), over TCP (or HTTP) to an admin interface, and the server's challenge is
//! answered as the resolver's identity
//! ([`ResolverBuilder::authenticator`](crate::ResolverBuilder::authenticator)).
//!
//! Administration sits beside the resolver and reaches servers through it: each request is
//! one request of the administration kind, sent by the resolver's procedure under its
//! deadline.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;

use crate::auth::{Credentials, Identity};
use crate::ident::Handle;
use crate::resolver::{error_text, RequestSpec, ResolveError, Resolver, Site};
use crate::wire::{
    Body, GetSiteInfoRequest, HandleValue, Limits, Message, OpCode, OpFlags, ResponseCode, SiteInfo,
};

/// How an administration request failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    /// The handle to create exists already (101).
    #[error("{handle} already exists")]
    AlreadyExists {
        /// The handle.
        handle: String,
    },
    /// The handle does not exist (100).
    #[error("{handle} does not exist")]
    NotFound {
        /// The handle.
        handle: String,
    },
    /// A value with one of the indexes given exists already (201).
    #[error("{handle}: a value exists at that index ({message})")]
    ValueExists {
        /// The handle.
        handle: String,
        /// The server's text (e.g. `Index conflict for 3`).
        message: String,
    },
    /// None of the values named exist (200).
    #[error("{handle}: no such values")]
    NoSuchValues {
        /// The handle.
        handle: String,
    },
    /// The identity may not do this (400 INVALID_ADMIN, 401 INSUFFICIENT_PERMISSIONS).
    #[error("{handle}: not permitted ({code})")]
    NotPermitted {
        /// The handle.
        handle: String,
        /// The server's code.
        code: ResponseCode,
    },
    /// The server did not accept the identity's answer to its challenge (403, 404): the
    /// message names the identity and says that the server refused its key.
    #[error("{handle}: authentication failed ({code}){}", refused_key(identity.as_ref(), *secret_key))]
    AuthenticationFailed {
        /// The handle.
        handle: String,
        /// The server's code.
        code: ResponseCode,
        /// The identity the resolver answered as (`None` when it has none).
        identity: Option<Identity>,
        /// True when that identity's key is a secret key (HS_SECKEY), false for a private
        /// key (HS_PUBKEY).
        secret_key: bool,
    },
    /// The server asked who we are and the resolver has no identity (402).
    #[error("{handle}: the server asks for authentication; the resolver has no identity")]
    AuthenticationNeeded {
        /// The handle.
        handle: String,
    },
    /// Any other code from the server.
    #[error("{handle}: the server answered {code}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Refused {
        /// The handle.
        handle: String,
        /// The code.
        code: ResponseCode,
        /// The server's text.
        message: String,
    },
    /// Home / unhome: the handle given is not a prefix handle (`0.NA/…`); nothing was sent.
    #[error("{handle}: not a prefix handle (0.NA/...)")]
    NotAPrefixHandle {
        /// The handle given.
        handle: String,
    },
    /// A server's site information (GET_SITE_INFO) did not decode.
    #[error("{server}: its site information does not decode: {reason}")]
    BadSiteInfo {
        /// The server asked.
        server: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The request did not get an answer (no site, network, deadline, a bad answer, ...).
    #[error(transparent)]
    Failed(#[from] ResolveError),
}

/// `: the server refused the secret key of 300:0.NA/20.500.1 (...)`: what a 403 or 404 to a
/// challenge answer means, for the identity that answered; empty without one.
fn refused_key(identity: Option<&Identity>, secret_key: bool) -> String {
    let Some(identity) = identity else {
        return String::new();
    };
    let handle = String::from_utf8_lossy(&identity.handle);
    let index = identity.index;
    if secret_key {
        format!(
            ": the server refused the secret key of {identity} (a wrong secret, or {handle} \
             holds no HS_SECKEY at index {index})"
        )
    } else {
        format!(
            ": the server refused the signature of {identity}'s private key (a wrong key \
             file, or {handle} holds no matching HS_PUBKEY at index {index})"
        )
    }
}

impl AdminError {
    /// True when nothing was sent: what was given is not a handle.
    pub fn is_input_error(&self) -> bool {
        match self {
            AdminError::Failed(e) => e.is_input_error(),
            AdminError::NotAPrefixHandle { .. } => true,
            _ => false,
        }
    }

    /// The server's response code, when a server answered with one.
    pub fn response_code(&self) -> Option<ResponseCode> {
        match self {
            AdminError::AlreadyExists { .. } => Some(ResponseCode::HandleAlreadyExists),
            AdminError::NotFound { .. } => Some(ResponseCode::HandleNotFound),
            AdminError::ValueExists { .. } => Some(ResponseCode::ValueAlreadyExists),
            AdminError::NoSuchValues { .. } => Some(ResponseCode::ValuesNotFound),
            AdminError::AuthenticationNeeded { .. } => Some(ResponseCode::AuthenticationNeeded),
            AdminError::NotPermitted { code, .. }
            | AdminError::AuthenticationFailed { code, .. }
            | AdminError::Refused { code, .. } => Some(*code),
            AdminError::Failed(e) => e.response_code(),
            AdminError::NotAPrefixHandle { .. } | AdminError::BadSiteInfo { .. } => None,
        }
    }

    /// True when a server answered and refused the request (any code but success); false
    /// when no answer came (silence, the network, the deadline, an answer that failed its
    /// checks) or nothing was sent.
    pub fn is_refused(&self) -> bool {
        match self {
            AdminError::Failed(e) => e.response_code().is_some(),
            AdminError::NotAPrefixHandle { .. } | AdminError::BadSiteInfo { .. } => false,
            _ => true,
        }
    }
}

/// How [`Admin::create_handle_with`] creates a handle: the request's OW (overwrite) and
/// MINT flags.
///
/// ```
/// use handle_resolver::CreateOptions;
/// let replace = CreateOptions::new().overwrite(true);
/// assert!(replace.is_overwrite() && !replace.is_mint());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateOptions {
    overwrite: bool,
    mint: bool,
}

impl CreateOptions {
    /// A plain create: an existing handle is refused (101).
    pub fn new() -> Self {
        Self::default()
    }

    /// OW: an existing handle is replaced by the new values instead of refused.
    pub fn overwrite(mut self, on: bool) -> Self {
        self.overwrite = on;
        self
    }

    /// MINT: the server appends a suffix of its own (the reference server: a random
    /// lower-case UUID) to the handle given, which is then a stem such as `20.500.1/item-`.
    pub fn mint(mut self, on: bool) -> Self {
        self.mint = on;
        self
    }

    /// True when OW is set.
    pub fn is_overwrite(&self) -> bool {
        self.overwrite
    }

    /// True when MINT is set.
    pub fn is_mint(&self) -> bool {
        self.mint
    }
}

/// Administration through a [`Resolver`] (`resolver.admin()`): its sites,
/// identity, transports and deadline.
///
/// ```no_run
/// use handle_resolver::auth::{Authenticator, SecretKey};
/// use handle_resolver::wire::HandleValue;
/// use handle_resolver::Resolver;
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let me = Authenticator::secret_key("300:20.500.12345/ADMIN".parse()?, SecretKey::new("s3cret"));
/// let resolver = Resolver::builder().authenticator(me).build()?;
/// let admin = resolver.admin();
/// admin
///     .create_handle("20.500.12345/new", vec![HandleValue::new(1, "URL", "https://example.org/")])
///     .await?;
/// for handle in admin.list_handles("20.500.12345").await? {
///     println!("{handle}");
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Admin {
    resolver: Resolver,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

impl Resolver {
    /// Administration of handles through this resolver (its sites, identity, transports and
    /// deadline): see [`Admin`].
    pub fn admin(&self) -> Admin {
        Admin {
            resolver: self.clone(),
        }
    }
}

impl Admin {
    /// Creates `handle` with `values` (CREATE_HANDLE; remember an HS_ADMIN value, or nobody
    /// may change it afterwards). Returns the handle as created.
    pub async fn create_handle(
        &self,
        handle: &str,
        values: Vec<HandleValue>,
    ) -> Result<String, AdminError> {
        self.create_handle_with(handle, values, CreateOptions::new())
            .await
    }

    /// Creates `handle` with `values` as `options` say: replacing an existing handle
    /// (overwrite), or under a suffix the server mints (`handle` is then the stem). Returns
    /// the handle as created (with a minted suffix, the server's name for it).
    ///
    /// ```no_run
    /// use handle_resolver::CreateOptions;
    /// use handle_resolver::wire::HandleValue;
    /// # async fn demo(admin: handle_resolver::Admin) -> Result<(), handle_resolver::AdminError> {
    /// let values = vec![HandleValue::new(1, "URL", "https://example.org/")];
    /// let minted = admin
    ///     .create_handle_with("20.500.12345/item-", values, CreateOptions::new().mint(true))
    ///     .await?;
    /// println!("minted {minted}");
    /// # Ok(()) }
    /// ```
    pub async fn create_handle_with(
        &self,
        handle: &str,
        values: Vec<HandleValue>,
        options: CreateOptions,
    ) -> Result<String, AdminError> {
        let h = if options.mint {
            parse_stem(handle)?
        } else {
            parse(handle)?
        };
        let body = Body::CreateHandleRequest {
            handle: Bytes::copy_from_slice(handle.as_bytes()),
            values,
        };
        let mut extra = OpFlags(0);
        extra.set(OpFlags::OW, options.overwrite);
        extra.set(OpFlags::MINT, options.mint);
        let answer = self
            .send_with(&h, OpCode::CreateHandle, body, extra, None)
            .await?;
        Ok(match answer.0 {
            Body::CreateHandleResponse { handle } => String::from_utf8_lossy(&handle).into_owned(),
            _ => h.to_string(),
        })
    }

    /// Deletes `handle` (DELETE_HANDLE).
    pub async fn delete_handle(&self, handle: &str) -> Result<(), AdminError> {
        let h = parse(handle)?;
        let body = Body::DeleteHandleRequest {
            handle: bytes_of(&h),
        };
        self.send(&h, OpCode::DeleteHandle, body).await.map(drop)
    }

    /// Adds `values` to `handle` (ADD_VALUE; their indexes must be free).
    pub async fn add_values(
        &self,
        handle: &str,
        values: Vec<HandleValue>,
    ) -> Result<(), AdminError> {
        let h = parse(handle)?;
        let body = Body::AddValueRequest {
            handle: bytes_of(&h),
            values,
        };
        self.send(&h, OpCode::AddValue, body).await.map(drop)
    }

    /// Replaces the values of `handle` that have the indexes of `values` (MODIFY_VALUE).
    pub async fn modify_values(
        &self,
        handle: &str,
        values: Vec<HandleValue>,
    ) -> Result<(), AdminError> {
        let h = parse(handle)?;
        let body = Body::ModifyValueRequest {
            handle: bytes_of(&h),
            values,
        };
        self.send(&h, OpCode::ModifyValue, body).await.map(drop)
    }

    /// Removes the values of `handle` at `indexes` (REMOVE_VALUE).
    pub async fn remove_values(&self, handle: &str, indexes: Vec<u32>) -> Result<(), AdminError> {
        let h = parse(handle)?;
        let body = Body::RemoveValueRequest {
            handle: bytes_of(&h),
            indexes,
        };
        self.send(&h, OpCode::RemoveValue, body).await.map(drop)
    }

    /// Every handle under `prefix` (LIST_HANDLES at the prefix's primary site; the server
    /// sends them in several messages).
    pub async fn list_handles(&self, prefix: &str) -> Result<Vec<String>, AdminError> {
        let prefix_handle = parse(&format!("0.NA/{prefix}"))?;
        let body = Body::ListHandlesRequest {
            handle: bytes_of(&prefix_handle),
        };
        let (first, rest) = self.send(&prefix_handle, OpCode::ListHandles, body).await?;
        let mut all = Vec::new();
        for body in std::iter::once(first).chain(rest) {
            if let Body::ListHandlesResponse { handles } = body {
                all.extend(
                    handles
                        .iter()
                        .map(|h| String::from_utf8_lossy(h).into_owned()),
                );
            }
        }
        Ok(all)
    }

    /// The site information of the server at `addr` (GET_SITE_INFO, sent as a query:
    /// UDP, then TCP): the site to [`home_prefix`](Self::home_prefix) a prefix at.
    pub async fn site_info(&self, addr: SocketAddr) -> Result<SiteInfo, AdminError> {
        let request = Message::request(
            Body::GetSiteInfoRequest(GetSiteInfoRequest {
                handle: Bytes::from_static(b"/"),
            }),
            OpCode::GetSiteInfo,
            0,
            0,
        );
        let answer = self.resolver.send_message(addr, &request).await?;
        match (answer.header.response_code, &answer.body) {
            (ResponseCode::Success, Body::SiteInfoResponse(r)) => {
                SiteInfo::decode(&r.record, &Limits::default()).map_err(|e| {
                    AdminError::BadSiteInfo {
                        server: addr,
                        reason: e.to_string(),
                    }
                })
            }
            (code, _) => Err(AdminError::Refused {
                handle: format!("site information of {addr}"),
                code,
                message: error_text(&answer),
            }),
        }
    }

    /// Makes every server of `site` serve the prefix of `prefix_handle` (`0.NA/…`, op
    /// HOME_NA, 300), as the reference's batch tool does: one request to each server's admin
    /// interface, in turn, authenticated as the resolver's identity (the servers' own
    /// configuration says who may; the reference server: its server administrators).
    /// Stops at the first server that refuses.
    ///
    /// ```no_run
    /// # async fn demo(admin: handle_resolver::Admin) -> Result<(), handle_resolver::AdminError> {
    /// let site = admin.site_info("127.0.0.1:2641".parse().unwrap()).await?;
    /// admin.home_prefix(&site, "0.NA/20.500.12345").await?;
    /// # Ok(()) }
    /// ```
    pub async fn home_prefix(
        &self,
        site: &SiteInfo,
        prefix_handle: &str,
    ) -> Result<(), AdminError> {
        self.home(site, prefix_handle, OpCode::HomeNa).await
    }

    /// Makes every server of `site` stop serving the prefix of `prefix_handle` (UNHOME_NA,
    /// 301); as [`home_prefix`](Self::home_prefix).
    pub async fn unhome_prefix(
        &self,
        site: &SiteInfo,
        prefix_handle: &str,
    ) -> Result<(), AdminError> {
        self.home(site, prefix_handle, OpCode::UnhomeNa).await
    }

    async fn home(
        &self,
        site: &SiteInfo,
        prefix_handle: &str,
        op: OpCode,
    ) -> Result<(), AdminError> {
        let h = parse(prefix_handle)?;
        let is_prefix_handle = prefix_handle
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"));
        if !is_prefix_handle {
            return Err(AdminError::NotAPrefixHandle {
                handle: prefix_handle.to_string(),
            });
        }
        for server in &site.servers {
            let mut one = site.clone();
            one.servers = vec![server.clone()];
            let sites = Arc::new(vec![Site::new(one)]);
            let body = Body::HomePrefixRequest {
                handle: Bytes::copy_from_slice(prefix_handle.as_bytes()),
            };
            self.send_with(&h, op, body, OpFlags(0), Some(sites))
                .await?;
        }
        Ok(())
    }

    /// Sends one request under the resolver's deadline; the body of the answer and of the
    /// messages that continued it, or the typed failure.
    async fn send(
        &self,
        handle: &Handle,
        op: OpCode,
        body: Body,
    ) -> Result<(Body, Vec<Body>), AdminError> {
        self.send_with(handle, op, body, OpFlags(0), None).await
    }

    /// As [`send`](Self::send), with `extra` flags, to `sites` when given (else to the
    /// primary sites of the handle's prefix).
    async fn send_with(
        &self,
        handle: &Handle,
        op: OpCode,
        body: Body,
        extra: OpFlags,
        sites: Option<Arc<Vec<Site>>>,
    ) -> Result<(Body, Vec<Body>), AdminError> {
        let certify = self.resolver.settings().certify;
        let mut spec = RequestSpec::administration(handle.clone(), op, body, certify);
        spec.flags = spec.flags | extra;
        let answer = match sites {
            Some(sites) => self.resolver.request_at(&spec, sites).await?,
            None => self.resolver.request(&spec).await?,
        };
        let code = answer.code();
        let text = handle.to_string();
        match code {
            ResponseCode::Success => {
                let rest = answer.continued.into_iter().map(|m| m.body).collect();
                Ok((answer.msg.body, rest))
            }
            ResponseCode::HandleAlreadyExists => Err(AdminError::AlreadyExists { handle: text }),
            ResponseCode::HandleNotFound => Err(AdminError::NotFound { handle: text }),
            ResponseCode::ValueAlreadyExists => Err(AdminError::ValueExists {
                handle: text,
                message: error_text(&answer.msg),
            }),
            ResponseCode::ValuesNotFound => Err(AdminError::NoSuchValues { handle: text }),
            ResponseCode::InvalidAdmin | ResponseCode::InsufficientPermissions => {
                Err(AdminError::NotPermitted { handle: text, code })
            }
            ResponseCode::AuthenticationFailed | ResponseCode::InvalidCredential => {
                let me = self.resolver.settings().authenticator.as_deref();
                Err(AdminError::AuthenticationFailed {
                    handle: text,
                    code,
                    identity: me.map(|a| a.identity().clone()),
                    secret_key: me
                        .is_some_and(|a| matches!(a.credentials(), Credentials::SecretKey(_))),
                })
            }
            ResponseCode::AuthenticationNeeded => {
                Err(AdminError::AuthenticationNeeded { handle: text })
            }
            code => Err(AdminError::Refused {
                handle: text,
                code,
                message: error_text(&answer.msg),
            }),
        }
    }
}

fn parse(handle: &str) -> Result<Handle, AdminError> {
    Handle::parse(handle).map_err(|e| AdminError::Failed(ResolveError::InvalidIdentifier(e)))
}

/// A stem to mint under (`20.500.1/item-`, or `20.500.1/`): a handle once a suffix is added.
fn parse_stem(stem: &str) -> Result<Handle, AdminError> {
    parse(stem).or_else(|e| parse(&format!("{stem}x")).map_err(|_| e))
}

fn bytes_of(h: &Handle) -> Bytes {
    Bytes::copy_from_slice(h.as_bytes())
}
