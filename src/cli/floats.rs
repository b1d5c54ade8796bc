//! Elements as JSON and as report text, infinities and NaN included.
//!
//! JSON has no spelling for infinities and NaN, and serde_json writes them as `null`, which
//! reads as "no value". The CLI writes them as the JSON strings `"inf"`, `"-inf"` and `"NaN"`
//! ([`to_json`]), and as the bare words `inf`, `-inf` and `NaN` in its text reports
//! ([`to_text`]). Finite floats and everything else are serde_json's own output.
//!
//! [`Special`] is a serializer adaptor: it forwards every call to serde_json's serializer and
//! wraps every nested value, so that a float is caught wherever it sits (a scalar, a field of a
//! struct, an element of an array).

use super::CliError;
use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

/// The strings that stand for the non-finite floats.
const WORDS: [&str; 3] = ["inf", "-inf", "NaN"];

/// The spelling of a non-finite float (`None` for a finite one).
fn word(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some(WORDS[2])
    } else if x == f64::INFINITY {
        Some(WORDS[0])
    } else if x == f64::NEG_INFINITY {
        Some(WORDS[1])
    } else {
        None
    }
}

/// `x` as compact JSON, non-finite floats as the strings `"inf"`, `"-inf"`, `"NaN"`.
pub fn to_json<T: Serialize + ?Sized>(x: &T) -> Result<String, CliError> {
    let mut out = Vec::new();
    x.serialize(Special(&mut serde_json::Serializer::new(&mut out)))
        .map_err(|e| CliError::Runtime(format!("cannot serialize: {e}")))?;
    String::from_utf8(out).map_err(|e| CliError::Runtime(format!("cannot serialize: {e}")))
}

/// `x` as [`to_json`] writes it, with the non-finite floats as bare words (`inf`), for text
/// reports. The elements the CLI prints hold numbers only, so every JSON string in them is one
/// of those words.
pub fn to_text<T: Serialize + ?Sized>(x: &T) -> Result<String, CliError> {
    let mut text = to_json(x)?;
    for w in WORDS {
        text = text.replace(&format!("\"{w}\""), w);
    }
    Ok(text)
}

/// A serializer that writes non-finite floats as strings and forwards everything else.
pub struct Special<S>(pub S);

/// A value to serialize through [`Special`].
struct Wrap<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Wrap<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Special(s))
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.0.$method($($arg),*)
        }
    )*};
}

impl<S: Serializer> Serializer for Special<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Special<S::SerializeSeq>;
    type SerializeTuple = Special<S::SerializeTuple>;
    type SerializeTupleStruct = Special<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Special<S::SerializeTupleVariant>;
    type SerializeMap = Special<S::SerializeMap>;
    type SerializeStruct = Special<S::SerializeStruct>;
    type SerializeStructVariant = Special<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        match word(f64::from(v)) {
            Some(w) => self.0.serialize_str(w),
            None => self.0.serialize_f32(v),
        }
    }

    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        match word(v) {
            Some(w) => self.0.serialize_str(w),
            None => self.0.serialize_f64(v),
        }
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Wrap(v))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Wrap(v))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Wrap(v))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Special)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Special)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Special)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Special)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Special)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Special)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Special)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! compound {
    ($($trait:ident: $method:ident;)*) => {$(
        impl<S: $trait> $trait for Special<S> {
            type Ok = S::Ok;
            type Error = S::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), S::Error> {
                self.0.$method(&Wrap(v))
            }
            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    )*};
}

compound! {
    SerializeSeq: serialize_element;
    SerializeTuple: serialize_element;
    SerializeTupleStruct: serialize_field;
    SerializeTupleVariant: serialize_field;
}

impl<S: SerializeMap> SerializeMap for Special<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), S::Error> {
        self.0.serialize_key(&Wrap(k))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&Wrap(v))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

impl<S: SerializeStruct> SerializeStruct for Special<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), S::Error> {
        self.0.serialize_field(key, &Wrap(v))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

impl<S: SerializeStructVariant> SerializeStructVariant for Special<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), S::Error> {
        self.0.serialize_field(key, &Wrap(v))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monoscan::ops::{AffineMap, Flagged, Indexed, MinMaxPair};

    #[test]
    fn non_finite_floats_are_words() {
        assert_eq!(to_json(&f64::INFINITY).unwrap(), "\"inf\"");
        assert_eq!(to_json(&f32::NEG_INFINITY).unwrap(), "\"-inf\"");
        assert_eq!(to_json(&f64::NAN).unwrap(), "\"NaN\"");
        assert_eq!(to_text(&f32::NAN).unwrap(), "NaN");
        assert_eq!(to_text(&[1.5, f64::INFINITY]).unwrap(), "[1.5,inf]");
        assert_eq!(
            to_text(&Indexed::new(f64::NEG_INFINITY, 3)).unwrap(),
            "{\"value\":-inf,\"index\":3}"
        );
        let flagged = Flagged::new(
            MinMaxPair {
                min: f32::NAN,
                max: 2.0,
            },
            true,
        );
        assert_eq!(
            to_json(&flagged).unwrap(),
            "{\"value\":{\"min\":\"NaN\",\"max\":2.0},\"flag\":1}"
        );
        let a = AffineMap::new(f64::INFINITY, -0.5);
        assert_eq!(to_text(&a).unwrap(), "{\"a\":inf,\"b\":-0.5}");
    }

    #[test]
    fn everything_else_is_serde_json() {
        let x = (
            1u8,
            -2i64,
            2.5f32,
            [1u32, 2],
            "text",
            Some(3.0f64),
            None::<u8>,
        );
        assert_eq!(to_json(&x).unwrap(), serde_json::to_string(&x).unwrap());
    }
}
