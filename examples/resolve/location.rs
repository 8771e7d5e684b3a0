//! `--location`: the URL the handle.net proxy would redirect to, for each identifier: its
//! HS_ALIAS values followed first (at most 20 hops, as the proxy), then one location of the
//! handle's `10320/loc` and `URL` values chosen as the proxy chooses (`Resolver::locate`), by
//! the request's `--locatt` wishes, `--client-address` and `--country`.
//!
//! One identifier prints its URL alone; several (or stdin) print `INPUT<TAB>URL` a line, in
//! input order, `INPUT<TAB>` for an identifier without a location. Failures go to stderr as
//! for a resolution; an identifier without a location exits 1.

use std::net::IpAddr;

use handle_resolver::wire::LocationRequest;
use handle_resolver::Resolver;

use crate::out::{self, Out};
use crate::render::{self, Context, BAD_INPUT, NOT_FOUND, OK};
use crate::{input, Args};

/// The request's attributes as `--locatt`, `--client-address` and `--country` give them.
pub fn request(
    locatt: &[String],
    address: Option<IpAddr>,
    country: Option<&str>,
) -> LocationRequest {
    let mut request = LocationRequest::new();
    for wish in locatt {
        request = request.locatt(wish.as_str());
    }
    if let Some(address) = address {
        request = request.address(address);
    }
    if let Some(country) = country {
        request = request.country(country);
    }
    request
}

/// Locates every identifier of the command line (and stdin), in order.
pub async fn run(
    resolver: &Resolver,
    request: &LocationRequest,
    args: &Args,
    ctx: &Context,
    o: &mut Out,
) -> std::io::Result<u8> {
    let several = args.ids.len() > 1 || args.ids.iter().any(|id| id == "-");
    let mut status = OK;
    for item in input::Items::new(args.ids.clone()) {
        let id = match item {
            input::Item::Id(id) => id,
            input::Item::Unreadable { why, .. } => {
                out::error(why);
                status = status.max(BAD_INPUT);
                continue;
            }
        };
        match resolver.locate(id.as_str(), request).await {
            Ok(Some(url)) if several => o.line(format!("{id}\t{url}"))?,
            Ok(Some(url)) => o.line(url)?,
            Ok(None) => {
                out::error(format!("{id}: no location (no 10320/loc or URL value)"));
                if several {
                    o.line(format!("{id}\t"))?;
                }
                status = status.max(NOT_FOUND);
            }
            Err(e) => {
                out::error(render::error_line(&id, &e, &[], ctx));
                if several {
                    o.line(format!("{id}\t"))?;
                }
                status = status.max(render::exit_status(&e));
            }
        }
        o.done()?;
    }
    Ok(status)
}
