//! [`Admin`]: creating, changing, deleting and listing handles, as the reference library
//! does: each request goes to a primary site of the handle's prefix (found as a resolution
//! finds its sites), over TCP (or HTTP) to an admin interface, and the server's challenge is
//! answered as the resolver's identity
//! ([`ResolverBuilder::authenticator`](crate::ResolverBuilder::authenticator)).
//!
//! Administration sits beside the resolver and reaches servers through it: each request is
//! one request of the administration kind, sent by the resolver's procedure under its
//! deadline.

use bytes::Bytes;

use crate::ident::Handle;
use crate::resolver::{error_text, RequestSpec, ResolveError, Resolver};
use crate::wire::{Body, HandleValue, OpCode, ResponseCode};

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
    /// The server did not accept the identity's answer to its challenge (403, 404).
    #[error("{handle}: authentication failed ({code})")]
    AuthenticationFailed {
        /// The handle.
        handle: String,
        /// The server's code.
        code: ResponseCode,
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
    /// The request did not get an answer (no site, network, deadline, a bad answer, ...).
    #[error(transparent)]
    Failed(#[from] ResolveError),
}

impl AdminError {
    /// True when nothing was sent: what was given is not a handle.
    pub fn is_input_error(&self) -> bool {
        matches!(self, AdminError::Failed(e) if e.is_input_error())
    }

    /// True when a server answered and refused the request (any code but success); false
    /// when no answer came (silence, the network, the deadline, an answer that failed its
    /// checks) or nothing was sent.
    pub fn is_refused(&self) -> bool {
        match self {
            AdminError::Failed(e) => e.response_code().is_some(),
            _ => true,
        }
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
        let h = parse(handle)?;
        let body = Body::CreateHandleRequest {
            handle: bytes_of(&h),
            values,
        };
        let answer = self.send(&h, OpCode::CreateHandle, body).await?;
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

    /// Sends one request under the resolver's deadline; the body of the answer and of the
    /// messages that continued it, or the typed failure.
    async fn send(
        &self,
        handle: &Handle,
        op: OpCode,
        body: Body,
    ) -> Result<(Body, Vec<Body>), AdminError> {
        let certify = self.resolver.settings().certify;
        let spec = RequestSpec::administration(handle.clone(), op, body, certify);
        let answer = self.resolver.request(&spec).await?;
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
                Err(AdminError::AuthenticationFailed { handle: text, code })
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

fn bytes_of(h: &Handle) -> Bytes {
    Bytes::copy_from_slice(h.as_bytes())
}
