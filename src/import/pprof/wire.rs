//! The protobuf wire format, by hand: varints, `(tag, value)` fields of a message, packed
//! and unpacked repeated integers; errors at absolute byte offsets.

use std::ops::Range;

pub(super) struct PbError {
    pub(super) at: usize,
    pub(super) message: String,
    /// The data ends inside the field (a truncated varint, or a length past the end).
    pub(super) cut: bool,
}

pub(super) type Pb<T> = Result<T, PbError>;

/// The largest length a protobuf field can have (messages are limited to 2 GiB).
const MAX_LENGTH: u64 = (1 << 31) - 1;

pub(super) fn err<T>(at: usize, message: String) -> Pb<T> {
    Err(PbError {
        at,
        message,
        cut: false,
    })
}

// ---------------------------------------------------------------------------------------
// Wire format.

/// Reads a varint at `*i`; `None` when `b` ends inside it or it runs past ten bytes.
#[inline(always)]
pub(super) fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut j = *i;
    let mut v = 0u64;
    let mut shift = 0u32;
    while j < b.len() {
        let byte = b[j];
        j += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            *i = j;
            return Some(v);
        }
        shift += 7;
        if shift >= 70 {
            return None;
        }
    }
    None
}

/// The error for a varint [`varint`] could not read at `start` of `b` (`base` is `b`'s
/// offset in the input).
pub(super) fn varint_error(b: &[u8], start: usize, base: usize, what: &str) -> PbError {
    let run = b[start.min(b.len())..]
        .iter()
        .take_while(|&&x| x >= 0x80)
        .count();
    let cut = start + run >= b.len();
    let message = if cut {
        format!("truncated varint ({what}): the data ends inside it")
    } else {
        format!("varint longer than 10 bytes ({what})")
    };
    PbError {
        at: base + start,
        message,
        cut,
    }
}

/// A field's value.
#[derive(Clone, Copy, Debug)]
pub(super) enum Value {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 2: the absolute byte range of the payload.
    Bytes(usize, usize),
    /// Wire types 1 and 5 (no `profile.proto` field uses them; skipped).
    Fixed,
}

/// One field of a message.
#[derive(Clone, Copy, Debug)]
pub(super) struct Field {
    pub(super) number: u64,
    /// Absolute offset of the field's tag.
    pub(super) at: usize,
    pub(super) value: Value,
}

impl Field {
    pub(super) fn bytes(&self, what: &str) -> Pb<Range<usize>> {
        match self.value {
            Value::Bytes(s, e) => Ok(s..e),
            _ => err(
                self.at,
                format!("{what} must be length-delimited (wire type 2), found another wire type"),
            ),
        }
    }

    pub(super) fn varint(&self, what: &str) -> Pb<u64> {
        match self.value {
            Value::Varint(v) => Ok(v),
            _ => err(
                self.at,
                format!("{what} must be a varint (wire type 0), found another wire type"),
            ),
        }
    }
}

/// The fields of one message, `data[range]`.
pub(super) struct Fields<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    pub(super) end: usize,
    /// What the message is, for errors (`Location`).
    pub(super) message: &'static str,
}

impl<'a> Fields<'a> {
    pub(super) fn new(data: &'a [u8], range: Range<usize>, message: &'static str) -> Self {
        Fields {
            data,
            pos: range.start,
            end: range.end,
            message,
        }
    }

    #[inline(always)]
    pub(super) fn next(&mut self) -> Pb<Option<Field>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let b = &self.data[..self.end];
        let at = self.pos;
        let Some(tag) = varint(b, &mut self.pos) else {
            return Err(varint_error(
                b,
                at,
                0,
                &format!("a field tag of {}", self.message),
            ));
        };
        let number = tag >> 3;
        if number == 0 {
            return err(at, format!("field number 0 in {}", self.message));
        }
        let value = match tag & 7 {
            0 => {
                let s = self.pos;
                match varint(b, &mut self.pos) {
                    Some(v) => Value::Varint(v),
                    None => {
                        return Err(varint_error(
                            b,
                            s,
                            0,
                            &format!("field {number} of {}", self.message),
                        ));
                    }
                }
            }
            2 => {
                let s = self.pos;
                let Some(len) = varint(b, &mut self.pos) else {
                    return Err(varint_error(
                        b,
                        s,
                        0,
                        &format!("the length of field {number} of {}", self.message),
                    ));
                };
                let left = self.end - self.pos;
                if len > left as u64 {
                    // Past protobuf's 2 GiB limit no writer put it there: damage, not a
                    // file cut short (whose fields before the cut are read).
                    let damaged = len > MAX_LENGTH;
                    return Err(PbError {
                        at: s,
                        message: format!(
                            "length {len} of field {number} of {} exceeds the remaining {left} \
                             bytes{}",
                            self.message,
                            if damaged {
                                " and the 2 GiB a protobuf message can hold: the data is damaged"
                            } else {
                                ""
                            }
                        ),
                        cut: !damaged,
                    });
                }
                let start = self.pos;
                self.pos += len as usize;
                Value::Bytes(start, self.pos)
            }
            1 | 5 => {
                let n = if tag & 7 == 1 { 8 } else { 4 };
                if self.end - self.pos < n {
                    return err(
                        at,
                        format!(
                            "truncated fixed-width field {number} of {}: {n} bytes needed, {} left",
                            self.message,
                            self.end - self.pos
                        ),
                    );
                }
                self.pos += n;
                Value::Fixed
            }
            w => {
                return err(
                    at,
                    format!(
                        "field {number} of {} has wire type {w}, which profile.proto never uses \
                         (expected 0, 1, 2 or 5)",
                        self.message
                    ),
                );
            }
        };
        Ok(Some(Field { number, at, value }))
    }
}

/// Calls `f` with each integer of a repeated scalar field: packed (a length-delimited run
/// of varints) or one unpacked varint.
#[inline(always)]
pub(super) fn for_each_int(
    data: &[u8],
    field: &Field,
    what: &str,
    mut f: impl FnMut(u64) -> Pb<()>,
) -> Pb<()> {
    match field.value {
        Value::Varint(v) => f(v),
        Value::Bytes(s, e) => {
            let b = &data[..e];
            let mut i = s;
            while i < e {
                let at = i;
                let Some(v) = varint(b, &mut i) else {
                    return Err(varint_error(b, at, 0, what));
                };
                f(v)?;
            }
            Ok(())
        }
        Value::Fixed => err(
            field.at,
            format!("{what} must be varints, found a fixed-width value"),
        ),
    }
}
