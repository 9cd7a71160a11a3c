//! JSON text to a `Value`, reading what Python's `json.loads` reads and refusing what it refuses:
//! NaN, Infinity and -Infinity are numbers; integers are exact, up to the 4,300 digits Python
//! reads (a longer one is refused, as there); a repeated key keeps its last value; raw control
//! characters in a string are an error. Two differences, both made
//! on purpose: an unpaired UTF-16 surrogate escape (`\ud83d`, an emoji cut in half) reads as
//! U+FFFD and is reported, where Python keeps a string that UTF-8 cannot encode; and nesting
//! deeper than MAX_DEPTH is an error, where Python's limit is its recursion limit (about 1,000).

use std::borrow::Cow;

use crate::value::{needs_escape, MapBuilder, Value};

pub const MAX_DEPTH: usize = 1000;
const PYTHON_INT_DIGITS: usize = 4300;

#[derive(Debug, PartialEq)]
pub struct Error;

pub struct Parsed<'a> {
    pub value: Value<'a>,
    /// Some unpaired surrogate escape was read as U+FFFD.
    pub mended: bool,
}

pub fn parse(text: &str) -> Result<Parsed<'_>, Error> {
    let mut reader = Reader { text, i: 0, mended: false };
    reader.ws();
    let value = reader.value(0)?;
    reader.ws();
    if reader.i != text.len() {
        return Err(Error); // "Extra data"
    }
    Ok(Parsed { value, mended: reader.mended })
}

struct Reader<'a> {
    text: &'a str, // read by bytes; a slice between two ASCII bytes is whole characters
    i: usize,
    mended: bool,
}

impl<'a> Reader<'a> {
    fn s(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s().get(self.i) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &str) -> bool {
        if self.s()[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, Error> {
        match self.s().get(self.i) {
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'n') if self.literal("null") => Ok(Value::Null),
            Some(b't') if self.literal("true") => Ok(Value::Bool(true)),
            Some(b'f') if self.literal("false") => Ok(Value::Bool(false)),
            Some(b'N') if self.literal("NaN") => Ok(Value::Float(f64::NAN)),
            Some(b'I') if self.literal("Infinity") => Ok(Value::Float(f64::INFINITY)),
            Some(b'-') if self.s()[self.i..].starts_with(b"-Infinity") => {
                self.i += 9;
                Ok(Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Error), // "Expecting value"
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.s().get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value<'a>, Error> {
        let start = self.i;
        if self.s()[self.i] == b'-' {
            self.i += 1;
        }
        match self.s().get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Error),
        }
        let mut float = false;
        // A fraction or an exponent only counts with digits after it (else: extra data).
        if self.s().get(self.i) == Some(&b'.') && matches!(self.s().get(self.i + 1), Some(b'0'..=b'9')) {
            self.i += 1;
            self.digits();
            float = true;
        }
        if let Some(b'e' | b'E') = self.s().get(self.i) {
            let mark = self.i;
            self.i += 1;
            if let Some(b'+' | b'-') = self.s().get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                self.i = mark;
            } else {
                float = true;
            }
        }
        let text = &self.text[start..self.i];
        if float {
            // Rust and Python both round to nearest; beyond f64's range both give infinity.
            return text.parse::<f64>().map(Value::Float).map_err(|_| Error);
        }
        Ok(match text.parse::<i64>() {
            Ok(n) => Value::Int(n),
            // Python refuses to read an integer of more digits (sys.get_int_max_str_digits(),
            // 4,300 by default): json.loads, and pydantic reading a stored turn, fail on it.
            Err(_) if text.trim_start_matches('-').len() > PYTHON_INT_DIGITS => return Err(Error),
            Err(_) => Value::BigInt(text.to_string()),
        })
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let text = self.text.get(self.i..self.i + 4).ok_or(Error)?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error);
        }
        self.i += 4;
        u32::from_str_radix(text, 16).map_err(|_| Error)
    }

    /// Past a run of characters that need no escape: to the next quote, backslash or control
    /// byte (or the text's end). Eight bytes at a time: most of the text read is a document's.
    fn run(&mut self) {
        let s = self.s();
        while let Some(word) = s.get(self.i..self.i + 8) {
            if needs_escape(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
                break;
            }
            self.i += 8;
        }
        while let Some(&b) = s.get(self.i) {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            self.i += 1;
        }
    }

    fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        self.i += 1; // the opening quote
        let start = self.i;
        self.run();
        // A run starts and stops at ASCII bytes (or the text's ends): whole characters. A string
        // with no escape, nearly every one, is borrowed from the text, not copied.
        if self.s().get(self.i) == Some(&b'"') {
            self.i += 1;
            return Ok(Cow::Borrowed(&self.text[start..self.i - 1]));
        }
        let mut out = self.text[start..self.i].to_string();
        loop {
            match self.s().get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let escape = *self.s().get(self.i).ok_or(Error)?;
                    self.i += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            out.push(self.code_point(unit)?);
                        }
                        _ => return Err(Error), // "Invalid \\escape"
                    }
                }
                _ => return Err(Error), // unterminated, or a raw control character
            }
            let start = self.i;
            self.run();
            out.push_str(&self.text[start..self.i]);
        }
    }

    /// The character a `\uXXXX` escape starts: a high surrogate pairs with a following
    /// `\uXXXX` low one; an unpaired one is U+FFFD.
    fn code_point(&mut self, unit: u32) -> Result<char, Error> {
        if (0xd800..0xdc00).contains(&unit) && self.s()[self.i..].starts_with(b"\\u") {
            let mark = self.i;
            self.i += 2;
            let low = self.hex4()?;
            if (0xdc00..0xe000).contains(&low) {
                let c = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                return char::from_u32(c).ok_or(Error);
            }
            self.i = mark; // not a pair: the next escape is read on its own
        }
        Ok(char::from_u32(unit).unwrap_or_else(|| {
            self.mended = true;
            '\u{fffd}'
        }))
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, Error> {
        if depth > MAX_DEPTH {
            return Err(Error);
        }
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s().get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::List(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.s().get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::List(items));
                }
                _ => return Err(Error),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, Error> {
        if depth > MAX_DEPTH {
            return Err(Error);
        }
        self.i += 1;
        let mut items = MapBuilder::default();
        self.ws();
        if self.s().get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Map(Vec::new()));
        }
        loop {
            self.ws();
            if self.s().get(self.i) != Some(&b'"') {
                return Err(Error); // "Expecting property name enclosed in double quotes"
            }
            let key = self.string()?;
            self.ws();
            if self.s().get(self.i) != Some(&b':') {
                return Err(Error);
            }
            self.i += 1;
            self.ws();
            let value = self.value(depth)?;
            items.insert(key, value); // a dict's: first place, last value
            self.ws();
            match self.s().get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Map(items.finish()));
                }
                _ => return Err(Error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value<'_> {
        parse(text).unwrap_or_else(|_| panic!("{text:?} refused")).value
    }

    fn s(text: &str) -> Value<'_> {
        Value::Str(Cow::Borrowed(text))
    }

    #[test]
    fn scalars_read_as_python_reads_them() {
        assert_eq!(value(" null "), Value::Null);
        assert_eq!(value("true"), Value::Bool(true));
        assert_eq!(value("-12"), Value::Int(-12));
        assert_eq!(value("1.5e3"), Value::Float(1500.0));
        assert_eq!(value("2E-1"), Value::Float(0.2));
        assert_eq!(value("Infinity"), Value::Float(f64::INFINITY));
        assert_eq!(value("-Infinity"), Value::Float(f64::NEG_INFINITY));
        assert!(matches!(value("NaN"), Value::Float(x) if x.is_nan()));
        assert_eq!(value("1e400"), Value::Float(f64::INFINITY)); // float('1e400') is inf too
                                                                 // Integers stay exact beyond i64, up to the 4,300 digits Python reads.
        assert_eq!(value("9223372036854775807"), Value::Int(i64::MAX));
        assert_eq!(value("-9223372036854775809"), Value::BigInt("-9223372036854775809".into()));
        let digits = "7".repeat(4300);
        assert_eq!(value(&digits), Value::BigInt(digits.clone()));
        assert!(parse(&format!("{digits}7")).is_err());
    }

    #[test]
    fn what_python_refuses_is_refused() {
        for text in [
            "",
            "nul",
            "01",
            "-",
            "+1",
            "1.",
            ".5",
            "1e",
            "[1,]",
            "{\"a\" 1}",
            "{'a': 1}",
            "{\"a\": 1,}",
            "\"unterminated",
            "\"tab\tinside\"",
            "\"\\x41\"",
            "\"\\u12\"",
            "[1] 2",
            "tru",
        ] {
            assert!(parse(text).is_err(), "{text:?} read");
        }
    }

    #[test]
    fn strings_unescape_and_borrow_when_they_can() {
        match value("\"plain text, no escape\"") {
            Value::Str(Cow::Borrowed(text)) => assert_eq!(text, "plain text, no escape"),
            other => panic!("{other:?}"),
        }
        assert_eq!(value(r#""a\"b\\c\/d\n\t\u00e9""#), s("a\"b\\c/d\n\té"));
        assert_eq!(value(r#""caf\u00e9 \ud83d\ude00""#), s("café 😀")); // a surrogate pair
        let plain = parse(r#""caf\u00e9""#).unwrap();
        assert!(!plain.mended);
    }

    #[test]
    fn an_unpaired_surrogate_is_mended_and_reported() {
        let cut = parse(r#""half \ud83d of an emoji""#).unwrap();
        assert_eq!(cut.value, s("half \u{fffd} of an emoji"));
        assert!(cut.mended);
        // A high surrogate followed by an escape that is not a low one: each read on its own.
        let two = parse(r#""\ud83d\u0041""#).unwrap();
        assert_eq!(two.value, s("\u{fffd}A"));
        assert!(two.mended);
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let parsed = value(r#"{"b": 1, "a": [true, null], "b": {"c": "d"}}"#);
        assert_eq!(
            parsed,
            Value::Map(vec![
                (Cow::Borrowed("b"), Value::Map(vec![(Cow::Borrowed("c"), s("d"))])),
                (Cow::Borrowed("a"), Value::List(vec![Value::Bool(true), Value::Null])),
            ])
        );
        assert_eq!(parsed.to_json(), r#"{"b": {"c": "d"}, "a": [true, null]}"#);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(value(&deep(MAX_DEPTH)).depth(), MAX_DEPTH);
        assert!(parse(&deep(MAX_DEPTH + 1)).is_err());
        let objects = format!("{}1{}", "{\"k\": ".repeat(MAX_DEPTH + 1), "}".repeat(MAX_DEPTH + 1));
        assert!(parse(&objects).is_err());
    }
}
