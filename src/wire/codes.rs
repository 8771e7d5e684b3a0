//! Operation codes, response codes and op-flag bits (RFC 3652 §2.2.2, PROTOCOL.md §2.3, §3).

macro_rules! open_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:expr => $text:expr,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $var,)*
            /// A code this library has no name for; kept so that it survives a round trip.
            Other(u32),
        }

        impl $name {
            /// The numeric code on the wire.
            pub const fn code(self) -> u32 {
                match self {
                    $(Self::$var => $val,)*
                    Self::Other(v) => v,
                }
            }

            /// The enum member for a wire code; unknown codes become `Other`.
            pub const fn from_code(v: u32) -> Self {
                match v {
                    $($val => Self::$var,)*
                    other => Self::Other(other),
                }
            }

            /// The reference library's name for the code (`"OTHER"` for unknown codes).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$var => $text,)*
                    Self::Other(_) => "OTHER",
                }
            }
        }

        impl From<u32> for $name {
            fn from(v: u32) -> Self {
                Self::from_code(v)
            }
        }

        impl From<$name> for u32 {
            fn from(v: $name) -> u32 {
                v.code()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    Self::Other(v) => write!(f, "{v}"),
                    _ => write!(f, "{} ({})", self.name(), self.code()),
                }
            }
        }
    };
}

open_enum! {
    /// Operation code (header offset 0).
    OpCode {
        /// 0: used in error answers to undecodable requests.
        Reserved = 0 => "RESERVED",
        /// 1: resolve a handle.
        Resolution = 1 => "RESOLUTION",
        /// 2: fetch the answering server's site information.
        GetSiteInfo = 2 => "GET_SITE_INFO",
        /// 100: create a handle.
        CreateHandle = 100 => "CREATE_HANDLE",
        /// 101: delete a handle.
        DeleteHandle = 101 => "DELETE_HANDLE",
        /// 102: add values.
        AddValue = 102 => "ADD_VALUE",
        /// 103: remove values.
        RemoveValue = 103 => "REMOVE_VALUE",
        /// 104: modify values.
        ModifyValue = 104 => "MODIFY_VALUE",
        /// 105: list handles.
        ListHandles = 105 => "LIST_HANDLES",
        /// 106: list derived prefixes (RFC `OC_LIST_NA`).
        ListNa = 106 => "LIST_NA",
        /// 200: answer to an authentication challenge.
        ChallengeResponse = 200 => "RESPONSE_TO_CHALLENGE",
        /// 201: server-to-server secret key check.
        VerifyResponse = 201 => "VERIFY_CHALLENGE",
        /// 300: home a prefix.
        HomeNa = 300 => "HOME_NA",
        /// 301: unhome a prefix.
        UnhomeNa = 301 => "UNHOME_NA",
        /// 302: list homed prefixes.
        ListHomedNas = 302 => "LIST_HOMED_NAS",
        /// 400: session setup.
        SessionSetup = 400 => "SESSION_SETUP",
        /// 401: session terminate.
        SessionTerminate = 401 => "SESSION_TERMINATE",
        /// 402: session key exchange.
        SessionExchangeKey = 402 => "SESSION_EXCHANGEKEY",
        /// 1000: replication: next transaction id.
        GetNextTxnId = 1000 => "GET_NEXT_TXN_ID",
        /// 1001: replication: transaction log.
        RetrieveTxnLog = 1001 => "RETRIEVE_TXN_LOG",
        /// 1002: replication: dump handles.
        DumpHandles = 1002 => "DUMP_HANDLES",
        /// 1003: server backup.
        BackupServer = 1003 => "BACKUP_SERVER",
    }
}

open_enum! {
    /// Response code (header offset 4); 0 in every request.
    ResponseCode {
        /// 0: requests carry this.
        Reserved = 0 => "RESERVED",
        /// 1: success.
        Success = 1 => "SUCCESS",
        /// 2: generic error.
        Error = 2 => "ERROR",
        /// 3: server too busy.
        ServerBusy = 3 => "SERVER_TOO_BUSY",
        /// 4: protocol error.
        ProtocolError = 4 => "PROTOCOL_ERROR",
        /// 5: operation not supported.
        OperationNotSupported = 5 => "OPERATION_NOT_SUPPORTED",
        /// 6: recursion count too high.
        RecursionCountTooHigh = 6 => "RECURSION_COUNT_TOO_HIGH",
        /// 7: server in backup (Java only).
        ServerBackup = 7 => "SERVER_BACKUP",
        /// 100: handle not found.
        HandleNotFound = 100 => "HANDLE_NOT_FOUND",
        /// 101: handle already exists.
        HandleAlreadyExists = 101 => "HANDLE_ALREADY_EXISTS",
        /// 102: invalid handle.
        InvalidHandle = 102 => "INVALID_HANDLE",
        /// 200: handle exists but no value matches the filter.
        ValuesNotFound = 200 => "VALUES_NOT_FOUND",
        /// 201: value already exists.
        ValueAlreadyExists = 201 => "VALUE_ALREADY_EXISTS",
        /// 202: invalid value.
        InvalidValue = 202 => "INVALID_VALUE",
        /// 300: the site information the client used is out of date.
        OutOfDateSiteInfo = 300 => "OUT_OF_DATE_SITE_INFO",
        /// 301: this server is not responsible (wrong hash, prefix not homed).
        ServerNotResponsible = 301 => "SERVER_NOT_RESP",
        /// 302: service referral.
        ServiceReferral = 302 => "SERVICE_REFERRAL",
        /// 303: prefix referral (RFC `RC_NA_DELEGATE`).
        PrefixReferral = 303 => "PREFIX_REFERRAL",
        /// 400: not an administrator.
        InvalidAdmin = 400 => "INVALID_ADMIN",
        /// 401: insufficient permissions.
        InsufficientPermissions = 401 => "INSUFFICIENT_PERMISSIONS",
        /// 402: authentication needed (challenge).
        AuthenticationNeeded = 402 => "AUTHENTICATION_NEEDED",
        /// 403: authentication failed.
        AuthenticationFailed = 403 => "AUTHENTICATION_FAILED",
        /// 404: invalid credential.
        InvalidCredential = 404 => "INVALID_CREDENTIAL",
        /// 405: authentication timed out.
        AuthenTimeout = 405 => "AUTHEN_TIMEOUT",
        /// 406: authentication error.
        AuthenError = 406 => "AUTHEN_ERROR",
        /// 500: session timed out.
        SessionTimeout = 500 => "SESSION_TIMEOUT",
        /// 501: session failed.
        SessionFailed = 501 => "SESSION_FAILED",
        /// 502: invalid session key.
        InvalidSessionKey = 502 => "INVALID_SESSION_KEY",
        /// 503: an RSA key is needed for the session exchange.
        NeedRsaKeyForSessionExchange = 503 => "NEED_RSAKEY_FOR_SESSIONEXCHANGE",
        /// 504: invalid session setup request.
        InvalidSessionSetupRequest = 504 => "INVALID_SESSIONSETUP_REQUEST",
        /// 505: session message rejected (replay).
        SessionMessageRejected = 505 => "SESSION_MESSAGE_REJECTED",
    }
}

/// The 32-bit op-flag word (header offset 8). RFC bit 0 is the most significant bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OpFlags(pub u32);

impl OpFlags {
    /// AT: authoritative (primary sites only / answer from a primary).
    pub const AT: OpFlags = OpFlags(0x8000_0000);
    /// CT: certify, the server must sign the response.
    pub const CT: OpFlags = OpFlags(0x4000_0000);
    /// ENC: encrypt the response with the session key.
    pub const ENC: OpFlags = OpFlags(0x2000_0000);
    /// REC: recursive.
    pub const REC: OpFlags = OpFlags(0x1000_0000);
    /// CA: cache-certify.
    pub const CA: OpFlags = OpFlags(0x0800_0000);
    /// CN: continuous, more messages follow.
    pub const CN: OpFlags = OpFlags(0x0400_0000);
    /// KC: keep the TCP connection open.
    pub const KC: OpFlags = OpFlags(0x0200_0000);
    /// PO: public values only.
    pub const PO: OpFlags = OpFlags(0x0100_0000);
    /// RD: the response body starts with a digest of the request.
    pub const RD: OpFlags = OpFlags(0x0080_0000);
    /// OW: overwrite when the value exists (Java ≥ 2.3).
    pub const OW: OpFlags = OpFlags(0x0040_0000);
    /// MINT: the server mints a new suffix (Java).
    pub const MINT: OpFlags = OpFlags(0x0020_0000);
    /// DNR: do not refer (Java).
    pub const DNR: OpFlags = OpFlags(0x0010_0000);
    /// The reference client's defaults for a resolution: REC | CA | PO.
    pub const RESOLUTION_DEFAULT: OpFlags = OpFlags(0x1900_0000);

    /// Every named flag with its short name, most significant first.
    pub const NAMED: [(OpFlags, &'static str); 12] = [
        (Self::AT, "AT"),
        (Self::CT, "CT"),
        (Self::ENC, "ENC"),
        (Self::REC, "REC"),
        (Self::CA, "CA"),
        (Self::CN, "CN"),
        (Self::KC, "KC"),
        (Self::PO, "PO"),
        (Self::RD, "RD"),
        (Self::OW, "OW"),
        (Self::MINT, "MINT"),
        (Self::DNR, "DNR"),
    ];

    /// True when every bit of `other` is set.
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets or clears the bits of `other`.
    pub fn set(&mut self, other: OpFlags, on: bool) {
        if on {
            self.0 |= other.0
        } else {
            self.0 &= !other.0
        }
    }

    /// Returns these flags with `other` added.
    pub const fn with(self, other: OpFlags) -> OpFlags {
        OpFlags(self.0 | other.0)
    }

    /// Returns these flags with `other` removed.
    pub const fn without(self, other: OpFlags) -> OpFlags {
        OpFlags(self.0 & !other.0)
    }

    /// Short names of the set flags, most significant first.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMED
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl std::ops::BitOr for OpFlags {
    type Output = OpFlags;
    fn bitor(self, rhs: OpFlags) -> OpFlags {
        OpFlags(self.0 | rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_codes_round_trip() {
        assert_eq!(OpCode::from_code(999), OpCode::Other(999));
        assert_eq!(OpCode::Other(999).code(), 999);
        assert_eq!(ResponseCode::from_code(303), ResponseCode::PrefixReferral);
        assert_eq!(ResponseCode::from_code(10_000).code(), 10_000);
    }

    #[test]
    fn default_resolution_flags_are_rec_ca_po() {
        assert_eq!(OpFlags::RESOLUTION_DEFAULT.names(), ["REC", "CA", "PO"]);
    }
}
