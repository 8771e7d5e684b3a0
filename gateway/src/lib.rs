//! `handle-gateway`: an HTTP gateway to the Handle System that redirects as the handle.net
//! proxy (the reference's `HDLProxy` servlet, Handle.Net 9.2.0) does, resolving over the
//! native protocol with the `handle-resolver` library.
//!
//! One folder per concern: [`config`] (the command line and the TOML file), [`path`] (the
//! handle and parameters of a request), [`redirect`] (status, `Location`, `Expires`, page),
//! [`locations`] (the `10320/loc` choice with its includes and namespaces), [`aliases`]
//! (HS_ALIAS), [`upstream`] (the resolver) and [`cache`] (the records every resolution
//! passes), [`pages`] and [`rest`] (the other answers), [`server`] (axum).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use clap::Parser;
//! use handle_gateway::{config::{Args, Settings}, server, upstream::Resolution};
//! let settings = Settings::from_args(&Args::parse_from(["handle-gateway", "--demo"]))?;
//! let resolution = Arc::new(Resolution::start(&settings).await?);
//! let listener = tokio::net::TcpListener::bind(settings.listen).await?;
//! server::serve(listener, resolution, server::shutdown_signal()).await?;
//! # Ok(()) }
//! ```

pub mod aliases;
pub mod cache;
pub mod config;
pub mod locations;
pub mod pages;
pub mod path;
pub mod redirect;
pub mod rest;
pub mod server;
pub mod upstream;
