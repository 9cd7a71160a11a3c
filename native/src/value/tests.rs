//! value/mod.rs's unit tests.

use super::*;

fn repr(x: f64) -> String {
    let mut out = String::new();
    write_float_repr(x, &mut out);
    out
}

#[test]
fn floats_are_written_as_pythons_repr() {
    for (x, python) in [
        (3.0, "3.0"),
        (-0.5, "-0.5"),
        (0.1, "0.1"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (123456.789, "123456.789"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (1.5e300, "1.5e+300"),
        (-2.5e-7, "-2.5e-07"),
        (0.0, "0.0"),
    ] {
        assert_eq!(repr(x), python, "{x:e}");
    }
}

#[test]
fn json_is_written_as_json_dumps_and_as_pydantic_writes_it() {
    let value = Value::Map(vec![
        (Cow::Borrowed("q"), Value::Str(Cow::Borrowed("say \"hi\"\n\u{1}é"))),
        (Cow::Borrowed("n"), Value::List(vec![Value::Int(1), Value::Float(f64::NAN), Value::Null])),
    ]);
    assert_eq!(value.to_json(), r#"{"q": "say \"hi\"\n\u0001é", "n": [1, NaN, null]}"#);
    let mut pydantic = String::new();
    value.write_pydantic_json(&mut pydantic);
    assert_eq!(pydantic, r#"{"q":"say \"hi\"\n\u0001é","n":[1,null,null]}"#);
}

#[test]
fn the_word_at_a_time_escape_test_agrees_with_the_byte_test() {
    let one = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
    let mut word = [b'a'; 8];
    for at in 0..8 {
        for byte in 0..=255u8 {
            word[at] = byte;
            assert_eq!(needs_escape(u64::from_le_bytes(word)), one(byte), "{byte:#x} at {at}");
        }
        word[at] = b'a';
    }
    // Bytes that match nothing alone, side by side (the borrow of one must not flag the next).
    for pair in [[0x21u8, 0x23], [0x5b, 0x5d], [0x20, 0x80], [0xff, 0x00]] {
        let mut word = [b'a'; 8];
        word[3..5].copy_from_slice(&pair);
        assert_eq!(needs_escape(u64::from_le_bytes(word)), pair.iter().any(|b| one(*b)), "{pair:?}");
    }
}

#[test]
fn truthiness_is_pythons() {
    assert!(!Value::Null.truthy());
    assert!(!Value::Int(0).truthy() && Value::Int(-1).truthy());
    assert!(!Value::Float(0.0).truthy() && Value::Float(f64::NAN).truthy());
    assert!(!Value::Str(Cow::Borrowed("")).truthy() && Value::Str(Cow::Borrowed("0")).truthy());
    assert!(!Value::List(vec![]).truthy() && Value::List(vec![Value::Null]).truthy());
    assert!(!Value::Map(vec![]).truthy());
}

#[test]
fn an_ordered_map_keeps_first_places_and_last_values_past_its_index_threshold() {
    let mut map: Ordered<String, usize> = Ordered::default();
    for round in 0..3 {
        for key in 0..40 {
            map.insert(format!("k{key}"), round * 100 + key);
        }
    }
    *map.slot("k0".to_string()) += 1;
    *map.slot("new".to_string()) += 7;
    let entries = map.finish();
    assert_eq!(entries.len(), 41);
    assert_eq!(entries[0], ("k0".to_string(), 201));
    assert_eq!(entries[39], ("k39".to_string(), 239));
    assert_eq!(entries[40], ("new".to_string(), 7));
}
