//! `--format tsv`: a header line, then one line per value and one per failure, with five
//! tab-separated fields: input, handle, responseCode, type, value. In a field, `\`, tab,
//! line feed and carriage return are written `\\`, `\t`, `\n` and `\r`, so that every
//! record is one line whatever the data holds. A failure has an empty type and its reason as
//! the value.

use std::borrow::Cow;

/// The first line.
pub const HEADER: &str = "input\thandle\tresponseCode\ttype\tvalue";

/// `text` with `\`, tab, line feed and carriage return escaped.
pub fn field(text: &str) -> Cow<'_, str> {
    if !text.contains(['\\', '\t', '\n', '\r']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One record.
pub fn line(input: &str, handle: &str, code: u32, type_name: &str, value: &str) -> String {
    format!(
        "{}\t{}\t{code}\t{}\t{}",
        field(input),
        field(handle),
        field(type_name),
        field(value)
    )
}
