//! Test support: checks a tool's typed `Args` against its input schema without running it. A
//! probing serde `Deserializer` learns the struct's field names (from `deserialize_struct`) and,
//! by leaving one field out at a time, which fields are required (serde reports
//! ``missing field `f` ``) — so "every schema property is an `Args` field and vice versa;
//! `required` ⇔ no default" is checked, not trusted.

use std::collections::BTreeSet;

use serde::de::value::{Error, StrDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::Value;

/// Learns the field names of a struct, then stops.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(de::Error::custom("Args is not a plain struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        self.0.extend(fields);
        Err(de::Error::custom("fields learnt"))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// An object holding `keys`, each with a plausible value of whatever type is asked for.
struct Probe(Vec<&'static str>);

impl<'de> de::Deserializer<'de> for Probe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(ProbeMap {
            keys: self.0.into_iter(),
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

struct ProbeMap {
    keys: std::vec::IntoIter<&'static str>,
}

impl<'de> MapAccess<'de> for ProbeMap {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        self.keys
            .next()
            .map(|k| seed.deserialize(StrDeserializer::<Error>::new(k)))
            .transpose()
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(ProbeValue)
    }
}

/// A value of the type the visitor asks for.
struct ProbeValue;

impl<'de> de::Deserializer<'de> for ProbeValue {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("1")
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(false)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(1)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.5)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(NoItems)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(UnitVariant(variants[0]))
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i128 u16 u128 f32 char str string bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map struct identifier ignored_any
    }
}

struct NoItems;

impl<'de> SeqAccess<'de> for NoItems {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        _: T,
    ) -> Result<Option<T::Value>, Error> {
        Ok(None)
    }
}

struct UnitVariant(&'static str);

impl<'de> EnumAccess<'de> for UnitVariant {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let name: StrDeserializer<'_, Error> = self.0.into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for UnitVariant {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Error> {
        Err(de::Error::custom("only unit variants are probed"))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Error> {
        Err(de::Error::custom("only unit variants are probed"))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(de::Error::custom("only unit variants are probed"))
    }
}

fn names(v: &Value, key: &str) -> BTreeSet<String> {
    match &v[key] {
        Value::Object(m) => m.keys().cloned().collect(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Checks `A` against `schema` (a tool's input schema without `connector_channel_id`): the same
/// field names as `properties`, and a field is `required` exactly when leaving it out fails.
pub fn check<A: DeserializeOwned>(schema: &Value) -> Result<(), String> {
    let mut fields = Vec::new();
    let _ = A::deserialize(FieldNames(&mut fields));
    let field_set: BTreeSet<String> = fields.iter().map(|f| f.to_string()).collect();
    let props = names(schema, "properties");
    if field_set != props {
        return Err(format!(
            "Args fields {field_set:?} differ from schema properties {props:?}"
        ));
    }
    A::deserialize(Probe(fields.clone()))
        .map_err(|e| format!("Args do not take a value for every field: {e}"))?;
    let required = names(schema, "required");
    for f in &fields {
        let rest: Vec<&'static str> = fields.iter().copied().filter(|g| g != f).collect();
        let needed = A::deserialize(Probe(rest))
            .err()
            .is_some_and(|e| e.to_string() == format!("missing field `{f}`"));
        if needed != required.contains(*f) {
            return Err(format!(
                "field {f}: required in Args = {needed}, in the schema = {}",
                !needed
            ));
        }
    }
    Ok(())
}
