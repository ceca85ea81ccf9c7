//! The algorithm registry: how a family of algorithms (congestion control, packet
//! schedulers) is declared from one list.
//!
//! Each algorithm's parameters live in the algorithm's own file, in a type that is also its
//! factory (the config-as-factory pattern): the type implements [`AlgorithmParams`] (its name,
//! whether it has a parameter table, range checks) and its family's factory trait
//! (`cc::CcFactory`, `mptcp::sched::SchedFactory`). A family is then one
//! `algorithm_registry!` list in `cc/mod.rs` or `mptcp/sched/mod.rs`, one line per
//! algorithm, from which everything else follows: the name enum (`cc = "lia"`) with its
//! `NAMES`, the configuration enum whose arms carry each algorithm's parameters and build it,
//! and the parameter tables (`cc_params.<name>`) of the schema. The schema's spelling is that
//! of serde's derive for the hand-written enums and structs these replaced, error messages
//! included. This module sits below the algorithms and the schema (`config`), which both use
//! it; it names neither.

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::Serialize;
use std::fmt;
use std::marker::PhantomData;

/// What the schema needs of an algorithm's parameter type.
pub trait AlgorithmParams: Clone + fmt::Debug + Default + PartialEq + Serialize + DeserializeOwned + 'static {
    /// The name scenarios choose the algorithm by (`cc = "lia"`), its parameter table's key
    /// (`cc_params.lia`) and the name results report.
    const NAME: &'static str;
    /// Whether the algorithm has a parameter table. One without parameters has none, and the
    /// schema refuses a table under its name.
    const TABLE: bool;
    /// Range checks the types alone cannot express: the key of the first bad value below the
    /// table (empty: the table as a whole) and what is wrong with it.
    fn check(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// Declares a family of algorithms from one list of `Variant => module::ParamsType` lines
/// (each type an [`AlgorithmParams`] and a `Factory`; the first line is the default):
///
/// - `Kind`, the name enum of the schema (`cc = "lia"`), with `ALL`, `NAMES` and `name()`,
///   and one method per `const NAME: Type => fn method;` line, which reads that constant of
///   the factory trait;
/// - `Config`, whose arms carry each algorithm's parameters, with `kind()` and one method per
///   `fn method(&self[, arg: Type]) -> Type;` line, which calls the factory trait's method
///   of that arm's parameters (static dispatch);
/// - `Params`, every algorithm's parameters (a field per module) as the schema's table of
///   tables (`cc_params`), with `config(kind)` and `check()`.
macro_rules! algorithm_registry {
    (
        $(#[$kind_doc:meta])*
        pub enum $Kind:ident { $($(#[$cdoc:meta])* const $C:ident: $cty:ty => fn $cfn:ident;)* }
        $(#[$config_doc:meta])*
        pub enum $Config:ident: $Factory:ident { $($methods:tt)* }
        $(#[$params_doc:meta])*
        pub struct $Params:ident;
        $arms:tt
    ) => {
        $crate::registry::algorithm_registry!(
            @types [$(#[$kind_doc])*] $Kind [$(#[$config_doc])*] $Config [$(#[$params_doc])*] $Params $arms
        );
        $($crate::registry::algorithm_registry!(@const $Kind $Factory [$(#[$cdoc])*] $C $cty => $cfn $arms);)*
        $crate::registry::algorithm_registry!(@methods $Config $Factory $arms $($methods)*);
    };
    (
        @types [$($kind_doc:tt)*] $Kind:ident [$($config_doc:tt)*] $Config:ident [$($params_doc:tt)*] $Params:ident
        { $($(#[$doc:meta])* $V:ident => $m:ident :: $P:ident,)+ }
    ) => {
        $($kind_doc)*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $Kind {
            $($(#[$doc])* $V,)+
        }

        impl $Kind {
            /// Every algorithm of the family, in the order of its list.
            pub const ALL: &'static [$Kind] = &[$($Kind::$V),+];
            /// Their names, as scenarios write them.
            pub const NAMES: &'static [&'static str] =
                &[$(<$m::$P as $crate::registry::AlgorithmParams>::NAME),+];

            /// The name scenarios write.
            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }
        }

        impl Default for $Kind {
            /// The first of the list.
            fn default() -> Self {
                Self::ALL[0]
            }
        }

        impl serde::Serialize for $Kind {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_unit_variant(stringify!($Kind), *self as u32, self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $Kind {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::registry::deserialize_choice(d, stringify!($Kind), Self::NAMES).map(|i| Self::ALL[i])
            }
        }

        $($config_doc)*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $Config {
            $($(#[$doc])* $V($m::$P),)+
        }

        impl $Config {
            /// Which algorithm this is.
            pub fn kind(&self) -> $Kind {
                match self {
                    $(Self::$V(_) => $Kind::$V,)+
                }
            }
        }

        $($params_doc)*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $Params {
            $($(#[$doc])* pub $m: $m::$P,)+
        }

        impl $Params {
            /// The keys of the parameter tables: the algorithms that have one, in list order.
            pub const TABLES: &'static [&'static str] = {
                const ALL: &[(&str, bool)] = &[$((
                    <$m::$P as $crate::registry::AlgorithmParams>::NAME,
                    <$m::$P as $crate::registry::AlgorithmParams>::TABLE,
                )),+];
                const N: usize = $crate::registry::count_tables(ALL);
                &$crate::registry::table_names::<N>(ALL)
            };

            /// Algorithm `kind` with its parameters.
            pub fn config(&self, kind: $Kind) -> $Config {
                match kind {
                    $($Kind::$V => $Config::$V(self.$m.clone()),)+
                }
            }

            /// Every table's range checks, in list order: the first bad value's key below the
            /// table of tables (`lia.alpha`) and what is wrong with it.
            pub fn check(&self) -> Result<(), (String, String)> {
                use $crate::registry::AlgorithmParams;
                $(
                    if <$m::$P as AlgorithmParams>::TABLE {
                        if let Err((key, msg)) = self.$m.check() {
                            return Err(($crate::registry::table_key(<$m::$P as AlgorithmParams>::NAME, key), msg));
                        }
                    }
                )+
                Ok(())
            }
        }

        impl $crate::registry::Tables for $Params {
            fn read_value<'de, A: serde::de::MapAccess<'de>>(&mut self, name: &str, map: &mut A) -> Result<(), A::Error> {
                use $crate::registry::AlgorithmParams;
                $(
                    if <$m::$P as AlgorithmParams>::TABLE && name == <$m::$P as AlgorithmParams>::NAME {
                        self.$m = map.next_value()?;
                    }
                )+
                Ok(())
            }

            fn read_elements<'de, A: serde::de::SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<(), A::Error> {
                $(
                    if <$m::$P as $crate::registry::AlgorithmParams>::TABLE {
                        if let Some(p) = seq.next_element()? {
                            self.$m = p;
                        }
                    }
                )+
                Ok(())
            }
        }

        impl serde::Serialize for $Params {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                use $crate::registry::AlgorithmParams;
                let mut st = s.serialize_struct(stringify!($Params), Self::TABLES.len())?;
                $(
                    if <$m::$P as AlgorithmParams>::TABLE {
                        st.serialize_field(<$m::$P as AlgorithmParams>::NAME, &self.$m)?;
                    }
                )+
                st.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for $Params {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::registry::deserialize_tables(d, stringify!($Params), Self::TABLES)
            }
        }
    };
    (
        @const $Kind:ident $Factory:ident [$($doc:tt)*] $C:ident $cty:ty => $cfn:ident
        { $($(#[$d:meta])* $V:ident => $m:ident :: $P:ident,)+ }
    ) => {
        impl $Kind {
            $($doc)*
            pub fn $cfn(self) -> $cty {
                match self {
                    $(Self::$V => <$m::$P as $Factory>::$C,)+
                }
            }
        }
    };
    (@methods $Config:ident $Factory:ident $arms:tt) => {};
    (
        @methods $Config:ident $Factory:ident $arms:tt
        $(#[$doc:meta])* fn $f:ident(&self) -> $ret:ty; $($rest:tt)*
    ) => {
        $crate::registry::algorithm_registry!(@method $Config $Factory $arms [$(#[$doc])*] $f () -> $ret);
        $crate::registry::algorithm_registry!(@methods $Config $Factory $arms $($rest)*);
    };
    (
        @methods $Config:ident $Factory:ident $arms:tt
        $(#[$doc:meta])* fn $f:ident(&self, $a:ident: $aty:ty) -> $ret:ty; $($rest:tt)*
    ) => {
        $crate::registry::algorithm_registry!(@method $Config $Factory $arms [$(#[$doc])*] $f ($a: $aty) -> $ret);
        $crate::registry::algorithm_registry!(@methods $Config $Factory $arms $($rest)*);
    };
    (
        @method $Config:ident $Factory:ident { $($(#[$d:meta])* $V:ident => $m:ident :: $P:ident,)+ }
        [$($doc:tt)*] $f:ident () -> $ret:ty
    ) => {
        impl $Config {
            $($doc)*
            pub fn $f(&self) -> $ret {
                match self {
                    $(Self::$V(p) => <$m::$P as $Factory>::$f(p),)+
                }
            }
        }
    };
    (
        @method $Config:ident $Factory:ident { $($(#[$d:meta])* $V:ident => $m:ident :: $P:ident,)+ }
        [$($doc:tt)*] $f:ident ($a:ident: $aty:ty) -> $ret:ty
    ) => {
        impl $Config {
            $($doc)*
            pub fn $f(&self, $a: $aty) -> $ret {
                match self {
                    $(Self::$V(p) => <$m::$P as $Factory>::$f(p, $a),)+
                }
            }
        }
    };
}

pub(crate) use algorithm_registry;

/// How many of `all` (name, has a table) have a table.
pub(crate) const fn count_tables(all: &[(&str, bool)]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < all.len() {
        n += all[i].1 as usize;
        i += 1;
    }
    n
}

/// The names of those of `all` that have a table, in order (`N` = [`count_tables`]).
pub(crate) const fn table_names<const N: usize>(all: &[(&'static str, bool)]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < all.len() {
        if all[i].1 {
            out[n] = all[i].0;
            n += 1;
        }
        i += 1;
    }
    out
}

/// `table.key`, or `table` for an empty key.
pub(crate) fn table_key(table: &str, key: &str) -> String {
    if key.is_empty() {
        table.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// A family's table of tables, read field by field (implemented by `algorithm_registry!`).
pub(crate) trait Tables: Default {
    /// Reads the table named `name` (one of the family's tables) as the map's next value.
    fn read_value<'de, A: MapAccess<'de>>(&mut self, name: &str, map: &mut A) -> Result<(), A::Error>;
    /// Reads the tables in order from a sequence; those it lacks keep their defaults.
    fn read_elements<'de, A: SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<(), A::Error>;
}

/// A variant or field name among `names`, read as serde's derive reads identifiers.
struct Identifier {
    names: &'static [&'static str],
    /// A variant (true) or a field (false): the words of the error messages.
    variant: bool,
}

impl<'de> de::DeserializeSeed<'de> for Identifier {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Identifier {
    fn unknown<E: de::Error>(&self, name: &str) -> E {
        if self.variant {
            E::unknown_variant(name, self.names)
        } else {
            E::unknown_field(name, self.names)
        }
    }
}

impl<'de> Visitor<'de> for Identifier {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.variant { "variant identifier" } else { "field identifier" })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        match usize::try_from(v) {
            Ok(i) if i < self.names.len() => Ok(i),
            _ => {
                let what = if self.variant { "variant" } else { "field" };
                let expected = format!("{what} index 0 <= i < {}", self.names.len());
                Err(E::invalid_value(Unexpected::Unsigned(v), &expected.as_str()))
            }
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.names.iter().position(|n| *n == v).ok_or_else(|| self.unknown(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<usize, E> {
        let v = String::from_utf8_lossy(v);
        self.names.iter().position(|n| *n == v).ok_or_else(|| self.unknown(&v))
    }
}

/// Reads a name enum (a unit variant among `names`) as serde's derive reads one; the index.
pub(crate) fn deserialize_choice<'de, D: Deserializer<'de>>(
    d: D,
    enum_name: &'static str,
    names: &'static [&'static str],
) -> Result<usize, D::Error> {
    struct Choice {
        enum_name: &'static str,
        names: &'static [&'static str],
    }
    impl<'de> Visitor<'de> for Choice {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "enum {}", self.enum_name)
        }
        fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<usize, A::Error> {
            let (i, variant) = data.variant_seed(Identifier { names: self.names, variant: true })?;
            de::VariantAccess::unit_variant(variant)?;
            Ok(i)
        }
    }
    d.deserialize_enum(enum_name, names, Choice { enum_name, names })
}

/// Reads a table of tables (fields `tables`, each defaulted when absent, none other) as
/// serde's derive reads a struct with `deny_unknown_fields`.
pub(crate) fn deserialize_tables<'de, D: Deserializer<'de>, T: Tables>(
    d: D,
    struct_name: &'static str,
    tables: &'static [&'static str],
) -> Result<T, D::Error> {
    struct Of<T> {
        struct_name: &'static str,
        tables: &'static [&'static str],
        of: PhantomData<T>,
    }
    impl<'de, T: Tables> Visitor<'de> for Of<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "struct {}", self.struct_name)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
            let mut t = T::default();
            t.read_elements(&mut seq)?;
            Ok(t)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
            let mut t = T::default();
            let mut seen = vec![false; self.tables.len()];
            while let Some(i) = map.next_key_seed(Identifier { names: self.tables, variant: false })? {
                if std::mem::replace(&mut seen[i], true) {
                    return Err(de::Error::duplicate_field(self.tables[i]));
                }
                t.read_value(self.tables[i], &mut map)?;
            }
            Ok(t)
        }
    }
    d.deserialize_struct(struct_name, tables, Of { struct_name, tables, of: PhantomData })
}
