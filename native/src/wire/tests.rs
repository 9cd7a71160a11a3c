//! wire/mod.rs's unit tests.

use super::*;

/// A field's tag byte(s): (number << 3) | wire type, as a varint.
fn tag(number: u32, wire: u8) -> Vec<u8> {
    varint(u64::from(number) << 3 | u64::from(wire))
}

fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out
}

fn len_field(number: u32, body: &[u8]) -> Vec<u8> {
    [tag(number, LEN), varint(body.len() as u64), body.to_vec()].concat()
}

#[test]
fn varints_tags_and_fixed_values_read_little_endian() {
    let mut r = Reader::new(&[0x96, 0x01, 0x08, 0x2d, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(r.varint().unwrap(), 150);
    assert_eq!(r.tag().unwrap(), (1, VARINT));
    assert_eq!(r.tag().unwrap(), (5, FIXED32));
    assert_eq!(r.fixed32().unwrap(), 1);
    assert_eq!(r.fixed64().unwrap(), 2);
    assert!(r.done());
    let max = varint(u64::MAX);
    assert_eq!(max.len(), 10);
    assert_eq!(Reader::new(&max).varint().unwrap(), u64::MAX);
}

#[test]
fn what_upb_refuses_in_the_framing_is_refused() {
    assert!(Reader::new(&[0x80; 11]).varint().is_err()); // a varint over 10 bytes
    assert!(Reader::new(&[0x96]).varint().is_err()); // cut in the middle
    assert!(Reader::new(&[0x00]).tag().is_err()); // field number 0
    assert!(Reader::new(&varint(1 << 35)).tag().is_err()); // a tag over 32 bits
    assert!(Reader::new(&[0x03, b'a']).bytes().is_err()); // shorter than its length
    assert!(Reader::new(&[1, 0, 0]).fixed32().is_err());
    for wire in [6, 7] {
        assert!(check(&tag(1000, wire), Msg::Span, MAX_DEPTH).is_err(), "wire type {wire}");
    }
}

#[test]
fn unknown_fields_and_groups_are_skipped_and_an_unmatched_end_group_refused() {
    let group = [tag(20, START_GROUP), tag(1, VARINT), vec![7], tag(20, 4)].concat();
    assert!(check(&group, Msg::Span, MAX_DEPTH).is_ok());
    let wrong_end = [tag(20, START_GROUP), tag(21, 4)].concat();
    assert!(check(&wrong_end, Msg::Span, MAX_DEPTH).is_err());
    assert!(check(&tag(20, START_GROUP), Msg::Span, MAX_DEPTH).is_err()); // never closed
    assert!(check(&tag(20, 4), Msg::Span, MAX_DEPTH).is_err()); // an end with no start
                                                                // A known field with the wrong wire type is an unknown field: skipped, not refused.
    assert!(check(&[tag(5, VARINT), vec![1]].concat(), Msg::Span, MAX_DEPTH).is_ok());
    assert!(check(&[tag(99, FIXED64), vec![0; 8]].concat(), Msg::Span, MAX_DEPTH).is_ok());
}

#[test]
fn string_fields_must_be_utf8_and_bytes_fields_need_not() {
    assert!(check(&len_field(5, "réponse".as_bytes()), Msg::Span, MAX_DEPTH).is_ok()); // name
    assert!(check(&len_field(5, &[0xff, 0xfe]), Msg::Span, MAX_DEPTH).is_err());
    assert!(check(&len_field(1, &[0xff; 16]), Msg::Span, MAX_DEPTH).is_ok()); // trace_id
    assert!(utf8(b"ascii").is_ok());
    assert!(utf8(&[0xc3]).is_err()); // a cut character
}

#[test]
fn nesting_counts_against_the_depth_left() {
    // Request > ResourceSpans > ScopeSpans > Span, whose name is not UTF-8.
    let span = len_field(5, &[0xff]);
    let request = len_field(1, &len_field(2, &len_field(2, &span)));
    assert!(check(&request, Msg::Request, MAX_DEPTH).is_err()); // the string inside is checked
    let fine = len_field(1, &len_field(2, &len_field(2, &len_field(5, b"ok"))));
    assert!(check(&fine, Msg::Request, MAX_DEPTH).is_ok());
    assert!(check(&fine, Msg::Request, 3).is_ok());
    assert!(check(&fine, Msg::Request, 2).is_err()); // three messages below the request
                                                     // AnyValue > ArrayValue > AnyValue ...: a value nested past the limit is refused.
    let mut value = Vec::new();
    for _ in 0..60 {
        value = len_field(5, &len_field(1, &value));
    }
    assert!(check(&value, Msg::AnyValue, MAX_DEPTH).is_err());
    assert!(check(&value, Msg::AnyValue, 2 * 60).is_ok());
}

#[test]
fn the_schema_lists_every_field_once() {
    let rows = schema();
    let span_name = rows.iter().find(|(msg, number, _)| msg.ends_with(".Span") && *number == 5);
    assert_eq!(span_name.map(|(_, _, kind)| kind.as_str()), Some("string"));
    let mut keys: Vec<_> = rows.iter().map(|(msg, number, _)| (*msg, *number)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), rows.len());
    assert!(rows.iter().any(|(msg, number, kind)| msg.ends_with("ExportTraceServiceRequest")
        && *number == 1
        && kind == "opentelemetry.proto.trace.v1.ResourceSpans"));
}
