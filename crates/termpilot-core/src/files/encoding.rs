//! The encodings `content` may arrive in, and turning it into the bytes to write.

use base64::Engine;

use crate::error::{Error, Result};

/// How the `content` string is turned into bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// The text as UTF-8.
    #[default]
    Utf8,
    /// 7-bit text; any other character is an error.
    Ascii,
    /// Binary data as base64.
    Base64,
    /// Binary data as hex digits.
    Hex,
    /// One byte per character, U+0000..U+00FF.
    Latin1,
}

/// The bytes `content` stands for in `encoding`.
pub fn decode(content: &str, encoding: Encoding) -> Result<Vec<u8>> {
    match encoding {
        Encoding::Utf8 => Ok(content.as_bytes().to_vec()),
        Encoding::Ascii => narrow(content, 0x7f, "ascii", "utf-8"),
        Encoding::Latin1 => narrow(content, 0xff, "latin1", "utf-8"),
        Encoding::Base64 => {
            let compact: String = content.chars().filter(|c| !c.is_whitespace()).collect();
            let engines = [
                base64::engine::general_purpose::STANDARD,
                base64::engine::general_purpose::URL_SAFE,
                base64::engine::general_purpose::STANDARD_NO_PAD,
                base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ];
            engines
                .iter()
                .find_map(|e| e.decode(&compact).ok())
                .ok_or_else(|| {
                    Error::InvalidInput(
                        "`content` is not valid base64; check it, or pass encoding utf-8 for text."
                            .into(),
                    )
                })
        }
        Encoding::Hex => {
            let compact: Vec<u8> = content
                .bytes()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            let bad = || {
                Error::InvalidInput(
                    "`content` is not valid hex (pairs of 0-9a-f); check it, or pass encoding utf-8 for text.".into(),
                )
            };
            if !compact.len().is_multiple_of(2) {
                return Err(bad());
            }
            compact
                .chunks(2)
                .map(|pair| {
                    let hi = (pair[0] as char).to_digit(16).ok_or_else(bad)?;
                    let lo = (pair[1] as char).to_digit(16).ok_or_else(bad)?;
                    Ok((hi * 16 + lo) as u8)
                })
                .collect()
        }
    }
}

fn narrow(content: &str, max: u32, name: &str, instead: &str) -> Result<Vec<u8>> {
    content
        .chars()
        .enumerate()
        .map(|(i, c)| {
            u8::try_from(c as u32).ok().filter(|b| u32::from(*b) <= max).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "`content` has {c:?} at character {i}, which {name} cannot encode; pass encoding {instead}."
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding() {
        assert_eq!(decode("é", Encoding::Utf8).unwrap(), "é".as_bytes());
        assert_eq!(decode("é", Encoding::Latin1).unwrap(), vec![0xe9]);
        assert!(
            decode("é", Encoding::Ascii)
                .unwrap_err()
                .to_string()
                .contains("ascii cannot encode")
        );
        assert!(decode("€", Encoding::Latin1).is_err());
        assert_eq!(
            decode("AAEC/w==", Encoding::Base64).unwrap(),
            vec![0, 1, 2, 255]
        );
        assert_eq!(
            decode("AAEC_w", Encoding::Base64).unwrap(),
            vec![0, 1, 2, 255]
        );
        assert!(decode("**", Encoding::Base64).is_err());
        assert_eq!(decode("00 01 fF", Encoding::Hex).unwrap(), vec![0, 1, 255]);
        assert!(decode("abc", Encoding::Hex).is_err());
        assert!(decode("zz", Encoding::Hex).is_err());
    }
}
