//! The reference client's binary `root_info` file: the values of `0.NA/0.NA`.

use bytes::Bytes;

use crate::wire::value::decode_values;
use crate::wire::{HandleValue, Limits, Reader};

use super::RootFileError;

/// Reads the reference client's binary `root_info`: `int4 totalLen (= file size − 4) ‖ int4
/// valueCount ‖ values` (the values of `0.NA/0.NA`).
pub fn read_root_info(bytes: &[u8], limits: &Limits) -> Result<Vec<HandleValue>, RootFileError> {
    let mut r = Reader::new(Bytes::copy_from_slice(bytes));
    let declared = r.u32("root_info.total_length")?;
    if usize::try_from(declared).ok() != Some(r.remaining()) {
        return Err(RootFileError::Length {
            declared,
            actual: r.remaining(),
        });
    }
    let values = decode_values(&mut r, "root_info.values", limits)?;
    r.finish("root_info")?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    fn root_info_file(values: &[HandleValue]) -> Vec<u8> {
        let mut body = BytesMut::new();
        crate::wire::value::encode_values(&mut body, "values", values).unwrap();
        let mut out = BytesMut::new();
        // int4 totalLen = everything after this field.
        out.put_u32(body.len() as u32);
        out.extend_from_slice(&body);
        out.to_vec()
    }

    #[test]
    fn reads_a_root_info_file() {
        let values = vec![
            HandleValue::new(1, "HS_SERV", "0.GHR/20"),
            HandleValue::new(100, "HS_ADMIN", vec![0u8, 1]),
        ];
        let file = root_info_file(&values);
        assert_eq!(read_root_info(&file, &Limits::default()).unwrap(), values);
    }

    #[test]
    fn rejects_root_info_with_a_wrong_total_length_or_trailing_bytes() {
        let mut file = root_info_file(&[HandleValue::new(1, "URL", "x")]);
        file.push(0);
        assert!(matches!(
            read_root_info(&file, &Limits::default()),
            Err(RootFileError::Length { .. })
        ));
        assert!(read_root_info(&[0, 0], &Limits::default()).is_err());
    }
}
